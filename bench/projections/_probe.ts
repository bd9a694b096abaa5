import autocannon from 'autocannon';
import { startCatalog } from '/work/main/test/projections/helpers.ts';
const svc = await startCatalog({ env: { RATE_LIMIT_RPS: '10000000', SVC_PUBLIC_READ_MODELS: 'Product' } });
try {
  for (const path of ['/health', '/public/records/Product?limit=20']) {
    const r = await autocannon({ url: svc.url + path, connections: 32, duration: 4 });
    console.log(path, Math.round(r.requests.average), r.latency.p50);
  }
} finally { await svc.close(); }
