import { resolve } from 'node:path';
import { createTestDatabase } from '/work/main/test/helpers/db.ts';
import { startTestService } from '/work/main/test/helpers/service.ts';
import { runLoad } from '/work/main/bench/records/load.ts';
const database = await createTestDatabase('svc_bench');
const svc = await startTestService({ fixture: '/work/main/bench/records/schema.ts', database,
  env: { RATE_LIMIT_RPS: '10000000', SVC_DB_POOL_SIZE: '20', SVC_LOG_LEVEL: 'error' } });
await svc.ctx.db.none(`insert into "item" ("id", "name", "price") select lpad(i::text, 26, '0'), 'item ' || i, i from generate_series(1, 10000) as i`);
await svc.ctx.db.none('analyze');
const token = await svc.token({ role: 'Sales', userId: 'bench' });
const workload = process.env.W ?? 'records';
const body = workload === 'records' ? JSON.stringify({ query: '{ records(model: "Item", limit: 20) }' })
  : JSON.stringify({ query: 'mutation($d: JSON!) { create(model: "Item", data: $d) }', variables: { d: { name: 'bench', price: 1 } } });
const r = await runLoad({ url: `${svc.url}/graphql`, connections: 16, seconds: 6, headers: { authorization: `Bearer ${token}` }, body });
console.log(workload, r);
await svc.close();
await database.drop();
