/**
 * `npm run bench:audit`: GraphQL `create` throughput with SVC_AUDIT_POLICY=full
 * against `off`, in one run. Two services (one database each) are loaded in
 * turn, in many short rounds whose order flips every round (off-full,
 * full-off, ...), so that a neighbour's load drifting over time hurts both
 * alike. (Loading both at once was tried: Postgres' commit-time NOTIFY lock
 * makes the split between them unfair.) The overhead is the median of the
 * per-round full/off ratios. Target: audit costs at most 10% of create
 * throughput.
 */
import { resolve } from 'node:path';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { startTestService, type TestService } from '../../test/helpers/service.ts';
import { measureWithCpu as measure, type Measured } from '../cpu.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const POOL_SIZE = 20;
const POLICIES = ['off', 'full'] as const;
const BODY = JSON.stringify({
  query: 'mutation($d: JSON!) { create(model: "Item", data: $d) }',
  variables: { d: { name: 'bench', price: 1, note: 'audited' } },
});

async function startPolicy(policy: string, databases: TestDatabase[]): Promise<TestService> {
  const database = await createTestDatabase('svc_bench');
  databases.push(database);
  return startTestService({
    fixture: resolve(import.meta.dirname, '..', 'records', 'schema.ts'),
    database,
    env: { RATE_LIMIT_RPS: '10000000', SVC_DB_POOL_SIZE: String(POOL_SIZE), SVC_LOG_LEVEL: 'error', SVC_AUDIT_POLICY: policy },
  });
}

async function main() {
  const databases: TestDatabase[] = [];
  const services = new Map<string, TestService>();
  try {
    for (const policy of POLICIES) services.set(policy, await startPolicy(policy, databases));
    const results = new Map<string, Measured[]>(POLICIES.map((p) => [p, []]));
    const specs = await Promise.all(POLICIES.map(async (policy) => {
      const svc = services.get(policy)!;
      const token = await svc.token({ role: 'Sales', userId: 'bench' });
      return { url: `${svc.url}/graphql`, connections: CONNECTIONS, headers: { authorization: `Bearer ${token}` }, body: BODY };
    }));
    for (let round = 0; round <= ROUNDS; round++) {
      // Round 0 warms up both (JIT, pools, plan caches) and is not counted.
      const seconds = round === 0 ? 2 : SECONDS;
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      const both: Measured[] = [];
      for (const i of order) both[i] = await measure(services.get(POLICIES[i])!, databases[i].name, { ...specs[i], seconds });
      if (round > 0) POLICIES.forEach((policy, i) => results.get(policy)!.push(both[i]));
      process.stderr.write(`round ${round}: ${POLICIES.map((p, i) => `${p} ${Math.round(both[i].rps)} req/s ${both[i].cpuMs.toFixed(2)} cpu ms`).join(', ')}\n`);
    }
    const audited = await services.get('full')!.ctx.db.one<{ n: number }>('select count(*)::int as n from svc_audit');
    print(results, audited.n);
  } finally {
    for (const svc of services.values()) await svc.close();
    for (const database of databases) await database.drop();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function print(results: Map<string, Measured[]>, auditRows: number) {
  const rows = [['policy', 'req/s (median)', 'p50 ms', 'p99 ms', 'CPU ms/create', 'rounds req/s', 'errors']];
  for (const policy of POLICIES) {
    const runs = results.get(policy)!;
    rows.push([policy, String(Math.round(median(runs.map((r) => r.rps)))), String(median(runs.map((r) => r.p50))),
      String(median(runs.map((r) => r.p99))), median(runs.map((r) => r.cpuMs)).toFixed(2), runs.map((r) => Math.round(r.rps)).join(' / '),
      String(runs.reduce((n, r) => n + r.errors + r.non2xx, 0))]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  '));
  const off = results.get('off')!;
  const ratios = results.get('full')!.map((r, i) => r.rps / off[i].rps);
  const overhead = (1 - median(ratios)) * 100;
  const cpuOff = median(off.map((r) => r.cpuMs));
  const cpuFull = median(results.get('full')!.map((r) => r.cpuMs));
  console.log(`\naudit overhead: ${overhead.toFixed(1)}% of create throughput (median of per-round full/off ratios: ${ratios.map((r) => r.toFixed(2)).join(' ')})`);
  console.log(`audit CPU cost: ${(((cpuFull - cpuOff) / cpuOff) * 100).toFixed(1)}% more CPU per create (server process + its Postgres backends)`);
  console.log(`target: at most 10%. create, ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} rounds per policy, alternating;`);
  console.log(`${auditRows} audit rows written under full`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
