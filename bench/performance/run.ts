/**
 * `npm run bench:performance`: every row of issue 16 side by side in one run,
 * each with its baseline and the ratio the target is set on:
 *
 *   read    GraphQL records (20 of 10,000 rows), c=64: svc-gen / raw floor / PostGraphile 5 /
 *           the floor's statement behind Koa, and behind Koa + graphql-js (svc-gen's stack alone)
 *   create  GraphQL create (row + event + audit), c=16 and c=64: the same five systems
 *   enqueue POST /jobs beside the create floor, and beside its own statement behind a bare server, c=16
 *   jobs    drain of BENCH_JOBS no-op jobs: svc-gen over the per-job HTTP routes (lease 50,
 *           complete each, 16 in flight; complete p50/p99), svc-gen SDK with batched acks,
 *           the worker plane's own statements in process (the SDK row without HTTP),
 *           pg-boss and graphile-worker in process; their enqueue rates (16 in flight, in process)
 *   start   `svc-gen start` to the first 200 of /ready on an up-to-date database, 10 starts,
 *           from this checkout (sources through tsx) and, when `npm run build` wrote dist/,
 *           as an installed package runs it
 *
 * HTTP load comes from autocannon in a child process; every server runs on
 * the same Postgres. The machine may be shared: the HTTP rows alternate their
 * systems in BENCH_ROUNDS (default 3) short slices, so that background load
 * falls on each alike, and every ratio is taken within this run.
 *
 * BENCH_ROWS=read,create,enqueue,jobs,start picks rows (default: all); BENCH_SECONDS
 * (default 6) per system and HTTP row, after a warm-up of BENCH_WARM_SECONDS (default 1); BENCH_JOBS
 * (default 5000), after an unmeasured drain of BENCH_WARM_JOBS (default 500)
 * by the same system (the SDK's worker process drains both in one run);
 * BENCH_STARTS (default 10).
 */
import { resolve } from 'node:path';
import { createTestDatabase } from '../../test/helpers/db.ts';
import { startTestService } from '../../test/helpers/service.ts';
import { prepareRecordsDatabase, startEnqueueFloor, startFloor, startPostGraphile, startStackFloor } from '../records/baselines.ts';
import { runLoad, type LoadResult } from '../records/load.ts';
import { startGraphile, startPgBoss, type Baseline } from '../jobs/baselines.ts';
import { freshDatabase, rate } from '../jobs/measure.ts';
import { startSvc } from '../jobs/svc.ts';
import { hasDist, measureStarts, type StartMode } from '../start/run.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const WARM_SECONDS = Number(process.env.BENCH_WARM_SECONDS ?? 1);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const JOBS = Number(process.env.BENCH_JOBS ?? 5000);
/** Jobs each system drains once, unmeasured, before its measured drain: every one plans its statements and warms up alike. */
const WARM_JOBS = Number(process.env.BENCH_WARM_JOBS ?? 500);
const STARTS = Number(process.env.BENCH_STARTS ?? 10);
const ROWS = new Set((process.env.BENCH_ROWS ?? 'read,create,enqueue,jobs,start').split(',').map((row) => row.trim()));
const POOL_SIZE = 20;
const SEED_ROWS = 10_000;
const ENQUEUE_BASELINE = 2000;

interface Line {
  readonly row: string;
  readonly system: string;
  readonly value: number;
  readonly unit: string;
  readonly detail?: string;
  /** Ratio to the row's reference, and what the target asks of it. */
  readonly ratio?: { readonly value: number; readonly of: string; readonly target?: number };
}

const lines: Line[] = [];
const log = (text: string) => process.stderr.write(`${text}\n`);


interface HttpTarget {
  readonly name: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

/**
 * The targets side by side: a warm-up each, then ROUNDS rounds in which each
 * runs SECONDS / ROUNDS; req/s is the mean over rounds, p50 and p99 the median.
 */
async function alternate(targets: readonly HttpTarget[], connections: number): Promise<LoadResult[]> {
  const rounds: LoadResult[][] = targets.map(() => []);
  for (const target of targets) await runLoad({ url: target.url, connections, headers: target.headers, body: target.body, seconds: WARM_SECONDS });
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, target] of targets.entries()) {
      const result = await runLoad({ url: target.url, connections, headers: target.headers, body: target.body, seconds: Math.max(1, Math.round(SECONDS / ROUNDS)) });
      if (result.errors + result.non2xx > 0) throw new Error(`${target.name}: ${result.errors} errors, ${result.non2xx} non-2xx`);
      rounds[i].push(result);
    }
  }
  return targets.map((target, i) => {
    const all = rounds[i];
    const result = {
      rps: all.reduce((sum, r) => sum + r.rps, 0) / all.length, p50: median(all.map((r) => r.p50)), p99: median(all.map((r) => r.p99)),
      errors: 0, non2xx: 0,
    };
    log(`  ${target.name} c=${connections}: ${Math.round(result.rps)} req/s (rounds: ${all.map((r) => Math.round(r.rps)).join(', ')}), p50 ${result.p50} ms, p99 ${result.p99} ms`);
    return result;
  });
}

const floorCreate = (floorUrl: string): HttpTarget =>
  ({ name: 'raw floor', url: `${floorUrl}/create`, headers: {}, body: JSON.stringify({ name: 'bench', price: 1 }) });

/**
 * Records read and create: svc-gen, the floor and PostGraphile on one
 * database. `withFloor` runs after the others are closed, given the floor's create.
 */
async function records(withFloor: (floorCreate: HttpTarget) => Promise<void>): Promise<void> {
  const database = await createTestDatabase('svc_bench');
  let floor: Awaited<ReturnType<typeof startFloor>> | undefined;
  try {
    const svc = await startTestService({
      fixture: resolve(import.meta.dirname, '..', 'records', 'schema.ts'), database,
      env: { RATE_LIMIT_RPS: '10000000', SVC_DB_POOL_SIZE: String(POOL_SIZE), SVC_LOG_LEVEL: 'error' },
    });
    try {
      await prepareRecordsDatabase(svc.ctx.db, SEED_ROWS);
      floor = await startFloor(database.url, POOL_SIZE);
      const pgl = await startPostGraphile(database.url, POOL_SIZE);
      const stack = await startStackFloor(database.url, POOL_SIZE);
      try {
        const token = await svc.token({ role: 'Sales', userId: 'bench' });
        const auth = { authorization: `Bearer ${token}` };
        const pglFields = 'rowId tenantId createdAt updatedAt deletedAt name price note';
        const targets = {
          read: [
            { name: 'svc-gen', url: `${svc.url}/graphql`, headers: auth, body: JSON.stringify({ query: '{ records(model: "Item", limit: 20) }' }) },
            { name: 'raw floor', url: `${floor.url}/records`, headers: {}, body: '{}' },
            { name: 'PostGraphile 5', url: `${pgl.url}/graphql`, headers: {},
              body: JSON.stringify({ query: `{ allItems(first: 20, orderBy: PRIMARY_KEY_ASC, condition: {deletedAt: null}) { nodes { ${pglFields} } } }` }) },
            { name: 'Koa + floor SQL', url: `${stack.url}/koa/records`, headers: {}, body: '{}' },
            { name: 'Koa + graphql-js + floor SQL', url: `${stack.url}/graphql`, headers: {}, body: JSON.stringify({ query: '{ records(model: "Item", limit: 20) }' }) },
          ],
          create: [
            { name: 'svc-gen', url: `${svc.url}/graphql`, headers: auth,
              body: JSON.stringify({ query: 'mutation($d: JSON!) { create(model: "Item", data: $d) }', variables: { d: { name: 'bench', price: 1 } } }) },
            floorCreate(floor.url),
            { name: 'PostGraphile 5', url: `${pgl.url}/graphql`, headers: {},
              body: JSON.stringify({ query: `mutation($name: String!, $price: Float!) { createItem(input: {item: {name: $name, price: $price}}) { item { ${pglFields} } } }`, variables: { name: 'bench', price: 1 } }) },
            { name: 'Koa + floor SQL', url: `${stack.url}/koa/create`, headers: {}, body: JSON.stringify({ name: 'bench', price: 1 }) },
            { name: 'Koa + graphql-js + floor SQL', url: `${stack.url}/graphql`, headers: {},
              body: JSON.stringify({ query: 'mutation($d: JSON!) { create(model: "Item", data: $d) }', variables: { d: { name: 'bench', price: 1 } } }) },
          ],
        };
        const runs: Array<{ workload: 'read' | 'create'; connections: number; target: number }> = [];
        if (ROWS.has('read')) runs.push({ workload: 'read', connections: 64, target: 0.9 });
        if (ROWS.has('create')) runs.push({ workload: 'create', connections: 16, target: 0.95 }, { workload: 'create', connections: 64, target: 0.95 });
        for (const run of runs) {
          log(`${run.workload} c=${run.connections}`);
          const [svcResult, floorResult, pglResult, koaResult, stackResult] = await alternate(targets[run.workload], run.connections);
          const row = `${run.workload} c=${run.connections}`;
          const detail = (r: LoadResult) => `p50 ${r.p50} ms, p99 ${r.p99} ms`;
          lines.push(
            { row, system: 'svc-gen (GraphQL)', value: svcResult.rps, unit: 'req/s', detail: detail(svcResult),
              ratio: { value: svcResult.rps / floorResult.rps, of: 'floor', target: run.target } },
            { row, system: 'raw floor (Node http + pg)', value: floorResult.rps, unit: 'req/s', detail: detail(floorResult) },
            { row, system: 'PostGraphile 5', value: pglResult.rps, unit: 'req/s', detail: detail(pglResult),
              ratio: { value: pglResult.rps / floorResult.rps, of: 'floor' } },
            { row, system: 'svc-gen / PostGraphile', value: svcResult.rps / pglResult.rps, unit: 'x',
              ratio: { value: svcResult.rps / pglResult.rps, of: 'PostGraphile', target: run.workload === 'create' ? 1 : undefined } },
            // svc-gen's stack alone (no auth, rules, audit, metrics...): what the target leaves for svc-gen's own work.
            { row, system: 'Koa + floor SQL', value: koaResult.rps, unit: 'req/s', detail: detail(koaResult),
              ratio: { value: koaResult.rps / floorResult.rps, of: 'floor' } },
            { row, system: 'Koa + graphql-js + floor SQL', value: stackResult.rps, unit: 'req/s', detail: detail(stackResult),
              ratio: { value: stackResult.rps / floorResult.rps, of: 'floor' } },
            { row, system: 'svc-gen / (Koa + graphql-js)', value: svcResult.rps / stackResult.rps, unit: 'x',
              ratio: { value: svcResult.rps / stackResult.rps, of: 'its stack alone' } },
          );
        }
      } finally {
        await stack.stop();
        await pgl.stop();
      }
    } finally {
      await svc.close();
    }
    // The enqueue row needs only the floor's create: the other servers' pools are closed first, so that
    // its two servers' pools fit in Postgres' max_connections (100) beside the floor's.
    await withFloor(floorCreate(floor.url));
  } finally {
    await floor?.stop();
    await database.drop();
  }
}

async function baselineJobs(name: string, start: (url: string) => Promise<Baseline>): Promise<{ enqueue: number; drain: number }> {
  const database = await freshDatabase();
  try {
    const baseline = await start(database.url);
    try {
      const enqueueMs = await baseline.enqueue(ENQUEUE_BASELINE, 16);
      await baseline.bulk(WARM_JOBS);
      await baseline.drain(WARM_JOBS);
      await baseline.bulk(JOBS);
      const drainMs = await baseline.drain(JOBS);
      const result = { enqueue: rate(ENQUEUE_BASELINE, enqueueMs), drain: rate(JOBS, drainMs) };
      log(`  ${name}: enqueue ${result.enqueue} jobs/s, drain ${result.drain} jobs/s`);
      return result;
    } finally {
      await baseline.close();
    }
  } finally {
    await database.drop();
  }
}

/** POST /jobs beside the create floor (c=16), alternating. */
async function enqueue(floorCreate: HttpTarget): Promise<Enqueued> {
  log('enqueue: POST /jobs beside the create floor and its own statement\'s floor, c=16');
  const svc = await startSvc();
  const enqueueFloor = await startEnqueueFloor(svc.service.database.url, POOL_SIZE);
  try {
    const body = JSON.stringify({ queue: 'enqueue-bench', kind: 'noop', payload: { n: 1 } });
    const post = { name: 'POST /jobs', url: `${svc.service.url}/jobs`, headers: { authorization: `Bearer ${svc.jwt}` }, body };
    const raw = { name: 'raw floor enqueue', url: enqueueFloor.url, headers: {}, body };
    const [mine, floor, own] = await alternate([post, floorCreate, raw], 16);
    return { svc: mine, floor, own };
  } finally {
    await enqueueFloor.stop();
    await svc.close();
  }
}

interface Enqueued {
  readonly svc: LoadResult;
  readonly floor: LoadResult;
  /** svc-gen's enqueue statement behind a bare http server. */
  readonly own: LoadResult;
}

function enqueueLines(enqueued: Enqueued): Line[] {
  return [
    { row: 'enqueue', system: 'svc-gen POST /jobs (c=16)', value: enqueued.svc.rps, unit: 'jobs/s',
      detail: `p50 ${enqueued.svc.p50} ms, p99 ${enqueued.svc.p99} ms`,
      ratio: { value: enqueued.svc.rps / enqueued.floor.rps, of: 'create floor c=16', target: 0.9 } },
    { row: 'enqueue', system: 'raw floor create (c=16)', value: enqueued.floor.rps, unit: 'req/s' },
    { row: 'enqueue', system: 'raw floor enqueue: the same statement as POST /jobs (c=16)', value: enqueued.own.rps, unit: 'jobs/s',
      detail: `p50 ${enqueued.own.p50} ms, p99 ${enqueued.own.p99} ms`,
      ratio: { value: enqueued.own.rps / enqueued.floor.rps, of: 'create floor c=16' } },
    { row: 'enqueue', system: 'svc-gen POST /jobs / its statement\'s floor', value: enqueued.svc.rps / enqueued.own.rps, unit: 'x',
      ratio: { value: enqueued.svc.rps / enqueued.own.rps, of: 'raw floor enqueue' } },
  ];
}

async function jobs(): Promise<void> {
  log(`jobs: drain ${JOBS}`);
  const perJob = await (async () => {
    const svc = await startSvc();
    try {
      await svc.enqueueBulk(WARM_JOBS);
      await svc.drainPerJob(WARM_JOBS, 16);
      await svc.enqueueBulk(JOBS);
      const drained = await svc.drainPerJob(JOBS, 16);
      log(`  svc-gen per-job routes: drain ${rate(JOBS, drained.ms)} jobs/s, complete p50 ${drained.p50.toFixed(1)} ms, p99 ${drained.p99.toFixed(1)} ms`);
      return drained;
    } finally {
      await svc.close();
    }
  })();
  const { sdk, statements } = await (async () => {
    const svc = await startSvc();
    try {
      // One worker process drains the warm-up jobs, then the measured ones: warm as pg-boss is in process.
      await svc.enqueueBulk(WARM_JOBS + JOBS);
      const ms = await svc.drain(JOBS, 4, 50, WARM_JOBS);
      log(`  svc-gen SDK: drain ${rate(JOBS, ms)} jobs/s`);
      await svc.enqueueBulk(JOBS);
      const floorMs = await svc.drainStatements(JOBS, 4, 50);
      log(`  svc-gen worker statements in process (no HTTP): drain ${rate(JOBS, floorMs)} jobs/s`);
      return { sdk: rate(JOBS, ms), statements: rate(JOBS, floorMs) };
    } finally {
      await svc.close();
    }
  })();
  const boss = await baselineJobs('pg-boss', startPgBoss);
  const graphile = await baselineJobs('graphile-worker', startGraphile);
  const perJobRate = rate(JOBS, perJob.ms);
  const drainRow = `drain ${JOBS} jobs`;
  lines.push(
    { row: drainRow, system: 'svc-gen per-job HTTP routes (lease 50, 16 in flight)', value: perJobRate, unit: 'jobs/s',
      detail: `complete p50 ${perJob.p50.toFixed(1)} ms, p99 ${perJob.p99.toFixed(1)} ms`,
      ratio: { value: perJobRate / graphile.drain, of: 'graphile-worker', target: 1 } },
    { row: drainRow, system: 'svc-gen SDK (4 workers x 50, batched acks)', value: sdk, unit: 'jobs/s',
      ratio: { value: sdk / boss.drain, of: 'pg-boss', target: 1 } },
    { row: drainRow, system: 'svc-gen worker statements in process, no HTTP (4 x 50)', value: statements, unit: 'jobs/s',
      detail: 'the floor of the SDK row: same statements and Job events, without the hop', ratio: { value: statements / boss.drain, of: 'pg-boss' } },
    { row: drainRow, system: 'pg-boss (in process, batch 50)', value: boss.drain, unit: 'jobs/s' },
    { row: drainRow, system: 'graphile-worker (in process, concurrency 8)', value: graphile.drain, unit: 'jobs/s' },
    { row: 'enqueue', system: 'pg-boss send (16 in flight)', value: boss.enqueue, unit: 'jobs/s' },
    { row: 'enqueue', system: 'graphile-worker addJob (16 in flight)', value: graphile.enqueue, unit: 'jobs/s' },
  );
}

async function start(): Promise<void> {
  const modes: StartMode[] = hasDist() ? ['checkout', 'installed'] : ['checkout'];
  for (const mode of modes) {
    log(`cold start x${STARTS} (${mode})`);
    const times = await measureStarts(STARTS, 'crm', mode);
    const detail = `min ${Math.round(times.min)} ms, max ${Math.round(times.max)} ms`
      + (times.cpu ? `; CPU median ${Math.round(times.cpu.median)} ms` : '');
    lines.push({ row: 'cold start', system: `svc-gen start to /ready, ${mode === 'installed' ? 'installed (dist/)' : 'checkout (tsx)'}, median`,
      value: times.median, unit: 'ms', detail, ratio: { value: times.median / 1000, of: '1 s', target: 1 } });
  }
}

function print(): void {
  const table = [['row', 'system', 'value', 'ratio', 'target', 'detail']];
  for (const line of lines) {
    const value = line.unit === 'x' ? `${line.value.toFixed(2)}x` : `${Math.round(line.value)} ${line.unit}`;
    const ratio = line.ratio && line.unit !== 'x' ? `${line.ratio.value.toFixed(2)} of ${line.ratio.of}` : '';
    const target = line.ratio?.target === undefined ? '' : targetText(line);
    table.push([line.row, line.system, value, ratio, target, line.detail ?? '']);
  }
  const widths = table[0].map((_, i) => Math.max(...table.map((cells) => cells[i].length)));
  console.log('');
  for (const cells of table) console.log(cells.map((cell, i) => cell.padEnd(widths[i])).join('  ').trimEnd());
}

function targetText(line: Line): string {
  const { value, target } = line.ratio!;
  if (line.row === 'cold start') return `< 1 s: ${value < 1 ? 'met' : 'NOT met'}`;
  return `>= ${target}: ${value >= target! ? 'met' : 'NOT met'}`;
}

const began = Date.now();
if (ROWS.has('read') || ROWS.has('create') || ROWS.has('enqueue')) {
  await records(async (floorCreate) => {
    if (ROWS.has('enqueue')) lines.push(...enqueueLines(await enqueue(floorCreate)));
  });
}
if (ROWS.has('jobs')) await jobs();
if (ROWS.has('start')) await start();
print();
console.log(`\n(${((Date.now() - began) / 1000).toFixed(0)} s; ${SECONDS} s per HTTP measurement; ratios are within this run)`);
process.exit(0);
