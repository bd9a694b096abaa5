/**
 * `npm run bench:records`: requests/s and p50/p99 latency of `create` and of
 * `records` (20 rows of 10,000) at 16 and 64 connections, for svc-gen beside
 * the floor (raw SQL through pg in a bare http server) and PostGraphile v5,
 * all against one local Postgres, in one run, all in this process: a quick
 * look. The figures docs/performance.md cites come from `npm run
 * bench:performance`, where each system runs in a process of its own.
 */
import { resolve } from 'node:path';
import { createTestDatabase } from '../../test/helpers/db.ts';
import { startTestService } from '../../test/helpers/service.ts';
import { prepareRecordsDatabase, startFloor, startPostGraphile } from './baselines.ts';
import { runLoad, type LoadResult } from './load.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = [16, 64];
const POOL_SIZE = 20;
const ROWS = 10_000;

interface Target {
  readonly name: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly create: string;
  readonly records: string;
}


async function main() {
  const database = await createTestDatabase('svc_bench');
  try {
    await measure(database);
  } finally {
    await database.drop();
  }
}

async function measure(database: Awaited<ReturnType<typeof createTestDatabase>>) {
  const svc = await startTestService({
    fixture: resolve(import.meta.dirname, 'schema.ts'),
    database,
    env: { RATE_LIMIT_RPS: '10000000', SVC_DB_POOL_SIZE: String(POOL_SIZE), SVC_LOG_LEVEL: 'error' },
  });
  await prepareRecordsDatabase(svc.ctx.db, ROWS);
  const floor = await startFloor(database.url, POOL_SIZE);
  const pgl = await startPostGraphile(database.url, POOL_SIZE);
  const token = await svc.token({ role: 'Sales', userId: 'bench' });
  const targets: Target[] = [
    { name: 'floor (raw pg)', url: floor.url, headers: {}, create: JSON.stringify({ name: 'bench', price: 1 }), records: '{}' },
    {
      name: 'svc-gen', url: `${svc.url}/graphql`, headers: { authorization: `Bearer ${token}` },
      create: JSON.stringify({ query: 'mutation($d: JSON!) { create(model: "Item", data: $d) }', variables: { d: { name: 'bench', price: 1 } } }),
      records: JSON.stringify({ query: '{ records(model: "Item", limit: 20) }' }),
    },
    {
      name: 'PostGraphile 5', url: `${pgl.url}/graphql`, headers: {},
      // The custom mutation doing the same work as svc-gen's create (row, event, audit entry: baselines.ts).
      create: JSON.stringify({ query: 'mutation($name: String!, $price: Float!) { addItem(input: {name: $name, price: $price}) { result { rowId tenantId createdAt updatedAt deletedAt name price note } } }', variables: { name: 'bench', price: 1 } }),
      records: JSON.stringify({ query: '{ allItems(first: 20, orderBy: PRIMARY_KEY_ASC, condition: {deletedAt: null}) { nodes { rowId tenantId createdAt updatedAt deletedAt name price note } } }' }),
    },
  ];
  const results = new Map<string, LoadResult>();
  try {
    for (const workload of ['create', 'records'] as const) {
      for (const connections of CONNECTIONS) {
        for (const target of targets) {
          const url = target.name.startsWith('floor') ? `${target.url}/${workload}` : target.url;
          const spec = { url, connections, headers: target.headers, body: target[workload] };
          await runLoad({ ...spec, seconds: 1 }); // warm-up: JIT, pools, plan caches
          const result = await runLoad({ ...spec, seconds: SECONDS });
          results.set(`${workload}/${connections}/${target.name}`, result);
          process.stderr.write(`${workload} c=${connections} ${target.name}: ${Math.round(result.rps)} req/s\n`);
        }
      }
    }
    print(results, targets.map((t) => t.name));
  } finally {
    await pgl.stop();
    await floor.stop();
    await svc.close();
  }
}

function print(results: Map<string, LoadResult>, names: string[]) {
  const rows = [['workload', 'conns', 'server', 'req/s', 'p50 ms', 'p99 ms', 'x floor', 'errors']];
  for (const workload of ['create', 'records']) {
    for (const connections of CONNECTIONS) {
      const floor = results.get(`${workload}/${connections}/${names[0]}`)!;
      for (const name of names) {
        const r = results.get(`${workload}/${connections}/${name}`)!;
        rows.push([workload, String(connections), name, String(Math.round(r.rps)), String(r.p50), String(r.p99),
          (r.rps / floor.rps).toFixed(2), String(r.errors + r.non2xx)]);
      }
    }
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  '));
  console.log('\ntargets: records >= 0.50 x floor; create >= 0.85 x floor and ahead of PostGraphile');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
