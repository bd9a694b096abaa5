/**
 * `npm run bench:actions`: GraphQL `create` throughput of a model with one
 * bound action (`Bound`: each create commits a job on queue `actions`, its
 * JobEnqueued event and its audit entry in the same statement) against the
 * same model without one (`Plain`), on one service and one database, in one
 * run. Rounds alternate (plain-bound, bound-plain, ...) so that a neighbour's
 * load drifting over time hurts both alike; the overhead is the median of the
 * per-round bound/plain ratios. Target: at most 15% slower. After it, the same two
 * statements without a server (./floor.ts): what the job row and its event
 * cost Postgres itself.
 */
import { resolve } from 'node:path';
import { createTestDatabase } from '../../test/helpers/db.ts';
import { startTestService } from '../../test/helpers/service.ts';
import { measureWithCpu as measure, type Measured } from '../cpu.ts';
import { databaseFloor } from './floor.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const MODELS = ['Plain', 'Bound'] as const;
const FLOOR_SECONDS = 3;
const body = (model: string) => JSON.stringify({
  query: `mutation($d: JSON!) { create(model: "${model}", data: $d) }`,
  variables: { d: { name: 'bench', price: 1 } },
});

async function main() {
  const database = await createTestDatabase('svc_bench');
  const service = await startTestService({
    fixture: resolve(import.meta.dirname, 'schema.ts'),
    database,
    env: { RATE_LIMIT_RPS: '10000000', SVC_DB_POOL_SIZE: '20', SVC_LOG_LEVEL: 'error' },
  });
  try {
    const token = await service.token({ role: 'Sales', userId: 'bench' });
    const spec = (model: string, seconds: number) => ({
      url: `${service.url}/graphql`, connections: CONNECTIONS, seconds, headers: { authorization: `Bearer ${token}` }, body: body(model),
    });
    const results = new Map<string, Measured[]>(MODELS.map((m) => [m, []]));
    for (let round = 0; round <= ROUNDS; round++) {
      // Round 0 warms up both (JIT, pools, plan caches) and is not counted.
      const seconds = round === 0 ? 2 : SECONDS;
      const order = round % 2 === 0 ? [0, 1] : [1, 0];
      const both: Measured[] = [];
      for (const i of order) both[i] = await measure(service, database.name, spec(MODELS[i], seconds));
      if (round > 0) MODELS.forEach((model, i) => results.get(model)!.push(both[i]));
      process.stderr.write(`round ${round}: ${MODELS.map((m, i) => `${m} ${Math.round(both[i].rps)} req/s ${both[i].cpuMs.toFixed(2)} cpu ms`).join(', ')}\n`);
    }
    const counts = await service.ctx.db.one<{ bound: number; jobs: number }>(
      `select (select count(*)::int from "bound") as bound, (select count(*)::int from svc_jobs where queue = 'actions') as jobs`);
    // The same two statements without HTTP, GraphQL or Node's per-request work: Postgres' own share.
    const floor = await databaseFloor(database.url, CONNECTIONS, FLOOR_SECONDS, ROUNDS);
    print(results, counts, floor);
  } finally {
    await service.close();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function print(results: Map<string, Measured[]>, counts: { bound: number; jobs: number }, floor: Record<'Plain' | 'Bound', number[]>) {
  const rows = [['model', 'req/s (median)', 'p50 ms', 'p99 ms', 'CPU ms/create', 'rounds req/s', 'errors']];
  for (const model of MODELS) {
    const runs = results.get(model)!;
    rows.push([model === 'Bound' ? 'Bound (1 action)' : 'Plain (none)', String(Math.round(median(runs.map((r) => r.rps)))),
      String(median(runs.map((r) => r.p50))), String(median(runs.map((r) => r.p99))), median(runs.map((r) => r.cpuMs)).toFixed(2),
      runs.map((r) => Math.round(r.rps)).join(' / '), String(runs.reduce((n, r) => n + r.errors + r.non2xx, 0))]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((cell, i) => cell.padEnd(widths[i])).join('  '));
  const plain = results.get('Plain')!;
  const ratios = results.get('Bound')!.map((r, i) => r.rps / plain[i].rps);
  console.log(`\nbound action overhead: ${((1 - median(ratios)) * 100).toFixed(1)}% of create throughput (median of per-round bound/plain ratios: ${ratios.map((r) => r.toFixed(2)).join(' ')})`);
  const cpu = (model: string) => median(results.get(model)!.map((r) => r.cpuMs));
  console.log(`bound action CPU cost: ${(((cpu('Bound') - cpu('Plain')) / cpu('Plain')) * 100).toFixed(1)}% more CPU per create (server process + its Postgres backends)`);
  console.log(`target: at most 15%. create, ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS} rounds per model, alternating;`);
  console.log(`${counts.bound} Bound rows, ${counts.jobs} action jobs (one per row: ${counts.bound === counts.jobs ? 'yes' : 'NO'})`);
  const floorRatios = floor.Bound.map((bound, i) => bound / floor.Plain[i]);
  console.log(`\ndatabase floor (the same two statements from ${CONNECTIONS} pg connections, prepared, no HTTP or GraphQL; ${FLOOR_SECONDS} s x ${ROUNDS} rounds):`);
  console.log(`  Plain ${Math.round(median(floor.Plain))} statements/s (${floor.Plain.map(Math.round).join(' / ')}), `
    + `Bound ${Math.round(median(floor.Bound))} statements/s (${floor.Bound.map(Math.round).join(' / ')})`);
  console.log(`  the job row and its event cost Postgres ${((1 - median(floorRatios)) * 100).toFixed(1)}% of the create's throughput `
    + `(median of per-round ratios: ${floorRatios.map((r) => r.toFixed(2)).join(' ')}); svc-gen's overhead above is this, diluted by its per-request work`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
