/**
 * `npm run bench:performance`: every row of docs/performance.md side by side in
 * one run, each with its baseline and the ratio its target is set on. Every
 * system runs in a process of its own (svc-gen as installed: `svc-gen start`
 * from dist/; the floors and PostGraphile: ../records/serve.ts; the job
 * systems' workers: ../jobs/consumer.ts), and beside each throughput stands
 * its CPU per request or per job (the process and its Postgres backends).
 *
 *   read    GraphQL records (20 of 10,000 rows), c=64: svc-gen / raw floor / PostGraphile 5 /
 *           the floor's statement behind Koa, and behind Koa + graphql-js (svc-gen's stack alone)
 *   create  GraphQL create (row + version-1 event + audit entry), c=16 and c=64: the same five;
 *           PostGraphile through a custom mutation doing the same work (../records/baselines.ts)
 *   enqueue POST /jobs beside the create floor, and beside its own statement behind a bare server, c=16
 *   jobs    drains (../jobs/run.ts): svc-gen's SDK and per-job routes, pg-boss and graphile-worker
 *           at their documented best; a standing start, one clock read in the database
 *   start   `svc-gen start` to the first 200 of /ready, installed (dist/), 10 starts
 *
 * HTTP load comes from autocannon in a child process. The machine may be
 * shared: the HTTP rows alternate their systems in BENCH_ROUNDS (default 3)
 * slices and the drains run in interleaved rounds, so that background load
 * falls on each alike; every ratio is taken within this run. A slice starts
 * once every system of its row is quiet: work one system leaves behind (a
 * consumer catching up) is its own CPU, not the next system's load.
 *
 * BENCH_BEFORE=DIR (another checkout, built: `npm ci && npm run build` there) adds, to the create
 * rows, that checkout's svc-gen (its generator's build of the same schema, its runtime from its
 * dist/, a database of its own) alternated with this checkout's on a database of its own: a
 * before/after of one run (BENCH_BEFORE_ONLY=1: only that pair).
 *
 * BENCH_EXECUTORS=1 adds, to the read and create rows, svc-gen on graphql-js (SVC_GRAPHQL_EXECUTOR=js)
 * alternated with svc-gen on graphql-jit (=jit), each on a seeded database of its own
 * (BENCH_EXECUTORS_ONLY=1: only that pair; BENCH_EXECUTORS_SAME=js or jit: both on that executor,
 * an A/A control of the pair's own asymmetry).
 *
 * BENCH_ROWS=read,create,enqueue,jobs,start picks rows (default: all); BENCH_SECONDS
 * (default 6) per system and HTTP row, after a warm-up of BENCH_WARM_SECONDS (default 2);
 * the drains' settings: ../jobs/run.ts; BENCH_STARTS (default 10).
 */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { prepareRecordsDatabase } from '../records/baselines.ts';
import { runLoad, type LoadResult } from '../records/load.ts';
import { benchDrains, DRAIN_SETTINGS } from '../jobs/run.ts';
import type { DrainSummary } from '../jobs/drain.ts';
import { measureStarts } from '../start/run.ts';
import { CREATE_BODY, RECORDS_SCHEMA, startInstalled, type InstalledService } from './installed.ts';
import { cpuSpent, CpuMeter, spawnChild, type Backends, type Child } from './processes.ts';
import { machineBusyMs } from '../cpu.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const WARM_SECONDS = Number(process.env.BENCH_WARM_SECONDS ?? 2);
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
const STARTS = Number(process.env.BENCH_STARTS ?? 10);
const BEFORE = process.env.BENCH_BEFORE ? resolve(process.env.BENCH_BEFORE) : undefined;
const EXECUTORS = process.env.BENCH_EXECUTORS === '1' || process.env.BENCH_EXECUTORS_ONLY === '1';
const ROWS = new Set((process.env.BENCH_ROWS ?? 'read,create,enqueue,jobs,start').split(',').map((row) => row.trim()));
/** Connections per server, the same for each: five servers and the other engineers' tests share max_connections (100). */
const POOL_SIZE = 10;
const SEED_ROWS = 10_000;
const SERVE = resolve(import.meta.dirname, '..', 'records', 'serve.ts');

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

/** A system under HTTP load: where to send it, and which processes and backends its CPU is. */
interface HttpTarget {
  readonly name: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  readonly pids: readonly number[];
  readonly backends: Backends;
}

interface Measured extends LoadResult {
  /** CPU ms (the system's process and its Postgres backends) per request, the work it did after its slice included. */
  readonly cpuMs: number;
  /** Requests per second over its slices and the time it took to finish the work each left (see sustained()). */
  readonly sustained: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];

/**
 * The targets side by side: a warm-up each, then ROUNDS rounds in which each
 * runs SECONDS / ROUNDS; req/s, CPU per request, p50 and p99 are the medians
 * over the rounds. After each slice the next one waits until every system of
 * the row is quiet again (settle()): a system that leaves work behind (a
 * consumer that fell behind under the load) finishes it before another is
 * measured, and that work counts in its own CPU per request, not in the
 * next system's slice.
 */
async function alternate(meter: CpuMeter, targets: readonly HttpTarget[], connections: number): Promise<Measured[]> {
  const rounds: Array<Array<LoadResult & { cpu: number; requests: number; others: number; rest: number; settle: number }>> = targets.map(() => []);
  const seconds = Math.max(1, Math.round(SECONDS / ROUNDS));
  const sampleAll = () => Promise.all(targets.map((target) => meter.sample(target.pids, target.backends)));
  for (const target of targets) await runLoad({ url: target.url, connections, headers: target.headers, body: target.body, seconds: WARM_SECONDS });
  await settle(sampleAll);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, target] of targets.entries()) {
      const before = await sampleAll();
      const busy = machineBusyMs();
      const began = performance.now();
      const result = await runLoad({ url: target.url, connections, headers: target.headers, body: target.body, seconds });
      const after = await sampleAll();
      const spent = targets.map((_, j) => cpuSpent(before[j], after[j]));
      // What else ran during the slice: the other systems compared (idle, or finishing work the load left them),
      // and the rest of the machine (the load generator, the other servers, other users).
      const others = spent.reduce((sum, ms, j) => sum + (j === i ? 0 : ms), 0);
      const machine = busy === null ? Number.NaN : machineBusyMs()! - busy;
      const elapsed = (performance.now() - began) / 1000; // the slice, the load generator's start and the samples
      if (result.errors + result.non2xx > 0) throw new Error(`${target.name}: ${result.errors} errors, ${result.non2xx} non-2xx`);
      const settled = await settle(sampleAll);
      const cpu = cpuSpent(before[i], settled.sampled[i]);
      rounds[i].push({ ...result, cpu, requests: result.rps * seconds, others: others / elapsed, rest: (machine - spent[i] - others) / elapsed, settle: settled.seconds });
    }
  }
  return targets.map((target, i) => {
    const all = rounds[i];
    const result = {
      rps: median(all.map((r) => r.rps)), p50: median(all.map((r) => r.p50)), p99: median(all.map((r) => r.p99)),
      errors: 0, non2xx: 0,
      cpuMs: median(all.map((r) => r.cpu / r.requests)),
      sustained: median(all.map(sustained)),
    };
    log(`  ${target.name} c=${connections}: ${Math.round(result.rps)} req/s (rounds: ${all.map((r) => Math.round(r.rps)).join(', ')}), `
      + `p50 ${result.p50} ms, p99 ${result.p99} ms, CPU ${result.cpuMs.toFixed(3)} ms/request (its work after the slice included: `
      + `${all.map((r) => r.settle.toFixed(1)).join(', ')} s to quiet; sustained ${Math.round(result.sustained)} req/s); meanwhile, ms of CPU per second: `
      + `the other systems of the row ${median(all.map((r) => r.others)).toFixed(0)} (rounds: ${all.map((r) => r.others.toFixed(0)).join(', ')}), `
      + `the rest of the machine ${median(all.map((r) => r.rest)).toFixed(0)}`);
    return result;
  });
}

/** A slice's requests over its time and the time its system took to finish the work it left (the quiet step not counted). */
const sustained = (r: { requests: number; settle: number }) =>
  r.requests / (Math.max(1, Math.round(SECONDS / ROUNDS)) + Math.max(0, r.settle - SETTLE_STEP_MS / 1000));

/** A system is quiet when it used less than this CPU in a SETTLE_STEP_MS (its idle timers use 10-20 ms a second: bench/performance/idle.ts). */
const QUIET_CPU_MS = 30;
const SETTLE_STEP_MS = 500;
const SETTLE_LIMIT_MS = 60_000;

/**
 * Waits until every system of a row used less than QUIET_CPU_MS in one
 * SETTLE_STEP_MS (at most SETTLE_LIMIT_MS, then says so); returns the
 * samples at that point and how long it took, the quiet step included.
 */
async function settle(sampleAll: () => Promise<Array<Map<number, number>>>): Promise<{ sampled: Array<Map<number, number>>; seconds: number }> {
  const began = performance.now();
  let last = await sampleAll();
  for (;;) {
    await new Promise((wake) => setTimeout(wake, SETTLE_STEP_MS));
    const now = await sampleAll();
    const busy = now.some((sampled, j) => cpuSpent(last[j], sampled) >= QUIET_CPU_MS);
    last = now;
    const waited = performance.now() - began;
    if (!busy) return { sampled: now, seconds: waited / 1000 };
    if (waited > SETTLE_LIMIT_MS) {
      log(`  (not quiet ${SETTLE_LIMIT_MS / 1000} s after a slice: measuring on)`);
      return { sampled: now, seconds: waited / 1000 };
    }
  }
}

/** A baseline server (../records/serve.ts) on the service's database, its backends told apart by application_name. */
async function baseline(service: InstalledService, system: string): Promise<Child & { backends: Backends }> {
  const child = await spawnChild(['--import', 'tsx', SERVE], { SYSTEM: system, DATABASE_URL: service.database.url, POOL_SIZE: String(POOL_SIZE) }, system);
  return { ...child, backends: { database: service.database.name, application: system } };
}

/** A checkout's commit, for the before row's name. */
const commitOf = (dir: string) => execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();

const detail = (r: Measured) => `p50 ${r.p50} ms, p99 ${r.p99} ms, CPU ${r.cpuMs.toFixed(3)} ms/req`;

/** Records read and create, then the enqueue row: svc-gen, the floors and PostGraphile on one database. */
async function records(meter: CpuMeter): Promise<void> {
  const service = await startInstalled(RECORDS_SCHEMA, { SVC_DB_POOL_SIZE: String(POOL_SIZE) });
  const children: Child[] = [];
  try {
    await prepareRecordsDatabase({ none: (text) => service.pool.query(text), multi: (text) => service.pool.query(text) }, SEED_ROWS);
    const svcCpu = { pids: [service.pid], backends: { database: service.database.name, application: 'svc-gen%' } };
    const floor = await baseline(service, 'floor');
    children.push(floor);
    const floorTarget = (path: string, body: string): HttpTarget =>
      ({ name: 'raw floor', url: `${floor.ready}${path}`, headers: {}, body, pids: [floor.pid], backends: floor.backends });
    const floorCreate = floorTarget('/create', JSON.stringify({ name: 'bench', price: 1 }));
    if (ROWS.has('read') || ROWS.has('create')) {
      const pgl = await baseline(service, 'postgraphile');
      const stack = await baseline(service, 'stack');
      // Before and after each on a database of its own, alone with its own writes (the shared
      // database also takes the floors' and PostGraphile's rows, whose events this service's consumers read).
      const before = BEFORE !== undefined && ROWS.has('create')
        ? { then: await startInstalled(RECORDS_SCHEMA, { SVC_DB_POOL_SIZE: String(POOL_SIZE) }, BEFORE), now: await startInstalled(RECORDS_SCHEMA, { SVC_DB_POOL_SIZE: String(POOL_SIZE) }) }
        : undefined;
      const same = process.env.BENCH_EXECUTORS_SAME as 'js' | 'jit' | undefined;
      const executors = EXECUTORS ? { js: await seeded(same ?? 'js'), jit: await seeded(same ?? 'jit') } : undefined;
      try {
        await readAndCreate(meter, service, svcCpu, floorTarget, floorCreate, pgl, stack, before, executors);
      } finally {
        await executors?.js.stop();
        await executors?.jit.stop();
        await before?.then.stop();
        await before?.now.stop();
        await stack.stop();
        await pgl.stop();
      }
    }
    // The enqueue row's own floor starts once PostGraphile's and the stack's pools are closed:
    // the servers' pools must fit in Postgres' max_connections (100).
    if (ROWS.has('enqueue')) await enqueue(meter, service, svcCpu, floorCreate);
  } finally {
    for (const child of children) await child.stop();
    await service.stop();
  }
}

/** svc-gen on one GraphQL executor, on a database of its own seeded as the shared one. */
async function seeded(executor: 'js' | 'jit'): Promise<InstalledService> {
  const service = await startInstalled(RECORDS_SCHEMA, { SVC_DB_POOL_SIZE: String(POOL_SIZE), SVC_GRAPHQL_EXECUTOR: executor });
  await prepareRecordsDatabase({ none: (text) => service.pool.query(text), multi: (text) => service.pool.query(text) }, SEED_ROWS);
  return service;
}

async function readAndCreate(
  meter: CpuMeter, service: InstalledService, svcCpu: Pick<HttpTarget, 'pids' | 'backends'>,
  floorTarget: (path: string, body: string) => HttpTarget, floorCreate: HttpTarget,
  pgl: Child & { backends: Backends }, stack: Child & { backends: Backends }, before?: { then: InstalledService; now: InstalledService },
  executors?: { js: InstalledService; jit: InstalledService },
): Promise<void> {
  const auth = { authorization: `Bearer ${await service.token('Sales', 'bench')}` };
  const pglFields = 'rowId tenantId createdAt updatedAt deletedAt name price note';
  const svc = (body: string): HttpTarget => ({ name: 'svc-gen', url: `${service.url}/graphql`, headers: auth, body, ...svcCpu });
  const pglTarget = (body: string): HttpTarget =>
    ({ name: 'PostGraphile 5', url: `${pgl.ready}/graphql`, headers: {}, body, pids: [pgl.pid], backends: pgl.backends });
  const stackTarget = (name: string, path: string, body: string): HttpTarget =>
    ({ name, url: `${stack.ready}${path}`, headers: {}, body, pids: [stack.pid], backends: stack.backends });
  const readQuery = JSON.stringify({ query: '{ records(model: "Item", limit: 20) }' });
  const createQuery = CREATE_BODY;
  const targets = {
    read: [
      svc(readQuery),
      floorTarget('/records', '{}'),
      pglTarget(JSON.stringify({ query: `{ allItems(first: 20, orderBy: PRIMARY_KEY_ASC, condition: {deletedAt: null}) { nodes { ${pglFields} } } }` })),
      stackTarget('Koa + floor SQL', '/koa/records', '{}'),
      stackTarget('Koa + graphql-js + floor SQL', '/graphql', readQuery),
    ],
    create: [
      svc(createQuery),
      floorCreate,
      pglTarget(JSON.stringify({
        query: `mutation($name: String!, $price: Float!) { addItem(input: {name: $name, price: $price}) { result { ${pglFields} } } }`,
        variables: { name: 'bench', price: 1 },
      })),
      stackTarget('Koa + floor SQL', '/koa/create', JSON.stringify({ name: 'bench', price: 1 })),
      stackTarget('Koa + graphql-js + floor SQL', '/graphql', createQuery),
    ],
  };
  const own = async (name: string, service: InstalledService, body = createQuery): Promise<HttpTarget> => ({
    name, url: `${service.url}/graphql`, headers: { authorization: `Bearer ${await service.token('Sales', 'bench')}` }, body,
    pids: [service.pid], backends: { database: service.database.name, application: 'svc-gen%' },
  });
  const beforeTargets = before && [await own('svc-gen, own database', before.now), await own('svc-gen before, own database', before.then)];
  const runs: Array<{ workload: 'read' | 'create'; connections: number; target: number }> = [];
  if (ROWS.has('read')) runs.push({ workload: 'read', connections: 64, target: 0.8 });
  if (ROWS.has('create')) runs.push({ workload: 'create', connections: 16, target: 0.85 }, { workload: 'create', connections: 64, target: 0.85 });
  for (const run of runs) {
    log(`${run.workload} c=${run.connections}`);
    const row = `${run.workload} c=${run.connections}`;
    if (run.workload === 'create' && beforeTargets !== undefined) {
      log(`create c=${run.connections}: before and after, each on its own database`);
      const [nowResult, thenResult] = await alternate(meter, beforeTargets, run.connections);
      lines.push(
        { row, system: 'svc-gen (installed, own database)', value: nowResult.rps, unit: 'req/s', detail: detail(nowResult) },
        { row, system: `svc-gen before (${commitOf(BEFORE!)}, installed, own database)`, value: thenResult.rps, unit: 'req/s', detail: detail(thenResult) },
        { row, system: 'svc-gen / svc-gen before', value: nowResult.rps / thenResult.rps, unit: 'x',
          ratio: { value: nowResult.rps / thenResult.rps, of: 'before', target: 0.95 } },
        // A version that leaves work behind its slice (a consumer fallen behind) is ahead in req/s by what it left.
        { row, system: 'svc-gen / svc-gen before, sustained (slice + time to finish its work)', value: nowResult.sustained / thenResult.sustained,
          unit: 'x', detail: `${Math.round(nowResult.sustained)} / ${Math.round(thenResult.sustained)} req/s`,
          ratio: { value: nowResult.sustained / thenResult.sustained, of: 'before' } },
      );
      if (process.env.BENCH_BEFORE_ONLY === '1') continue;
    }
    if (executors) {
      log(`${row}: graphql-js and graphql-jit, each on its own database`);
      const body = run.workload === 'read' ? readQuery : createQuery;
      const [js, jit] = await alternate(meter, [await own('svc-gen js', executors.js, body), await own('svc-gen jit', executors.jit, body)], run.connections);
      lines.push(
        { row, system: 'svc-gen, SVC_GRAPHQL_EXECUTOR=js (own database)', value: js.rps, unit: 'req/s', detail: detail(js) },
        { row, system: 'svc-gen, SVC_GRAPHQL_EXECUTOR=jit (own database)', value: jit.rps, unit: 'req/s', detail: detail(jit) },
        { row, system: 'jit / js', value: jit.rps / js.rps, unit: 'x', detail: `CPU ${(jit.cpuMs / js.cpuMs).toFixed(2)}x` },
      );
      if (process.env.BENCH_EXECUTORS_ONLY === '1') continue;
    }
    const [svcResult, floorResult, pglResult, koaResult, stackResult] = await alternate(meter, targets[run.workload], run.connections);
    lines.push(
      { row, system: 'svc-gen (GraphQL, installed)', value: svcResult.rps, unit: 'req/s', detail: detail(svcResult),
        ratio: { value: svcResult.rps / floorResult.rps, of: 'floor', target: run.target } },
      { row, system: 'raw floor (Node http + pg)', value: floorResult.rps, unit: 'req/s', detail: detail(floorResult) },
      { row, system: `PostGraphile 5${run.workload === 'create' ? ' (custom mutation, same work)' : ''}`, value: pglResult.rps, unit: 'req/s',
        detail: detail(pglResult), ratio: { value: pglResult.rps / floorResult.rps, of: 'floor' } },
      { row, system: 'svc-gen / PostGraphile', value: svcResult.rps / pglResult.rps, unit: 'x',
        ratio: { value: svcResult.rps / pglResult.rps, of: 'PostGraphile', target: 1 } },
      // svc-gen's stack alone (no auth, rules, audit, metrics...): what the target leaves for svc-gen's own work.
      { row, system: 'Koa + floor SQL', value: koaResult.rps, unit: 'req/s', detail: detail(koaResult),
        ratio: { value: koaResult.rps / floorResult.rps, of: 'floor' } },
      { row, system: 'Koa + graphql-js + floor SQL', value: stackResult.rps, unit: 'req/s', detail: detail(stackResult),
        ratio: { value: stackResult.rps / floorResult.rps, of: 'floor' } },
      { row, system: 'svc-gen / (Koa + graphql-js)', value: svcResult.rps / stackResult.rps, unit: 'x',
        ratio: { value: svcResult.rps / stackResult.rps, of: 'its stack alone' } },
    );
  }
}

/** POST /jobs beside the create floor and beside its own statement behind a bare server (c=16), alternating. */
async function enqueue(meter: CpuMeter, service: InstalledService, svcCpu: Pick<HttpTarget, 'pids' | 'backends'>, floorCreate: HttpTarget) {
  log('enqueue: POST /jobs beside the create floor and its own statement\'s floor, c=16');
  const own = await baseline(service, 'enqueue-floor');
  try {
    const body = JSON.stringify({ queue: 'enqueue-bench', kind: 'noop', payload: { n: 1 } });
    const jwt = await service.token('Viewer', 'bench');
    const post: HttpTarget = { name: 'POST /jobs', url: `${service.url}/jobs`, headers: { authorization: `Bearer ${jwt}` }, body, ...svcCpu };
    const raw: HttpTarget = { name: 'raw floor enqueue', url: own.ready, headers: {}, body, pids: [own.pid], backends: own.backends };
    const [mine, floor, statement] = await alternate(meter, [post, floorCreate, raw], 16);
    lines.push(
      { row: 'enqueue', system: 'svc-gen POST /jobs (c=16)', value: mine.rps, unit: 'jobs/s', detail: detail(mine),
        ratio: { value: mine.rps / floor.rps, of: 'create floor c=16' } },
      { row: 'enqueue', system: 'raw floor create (c=16)', value: floor.rps, unit: 'req/s', detail: detail(floor) },
      { row: 'enqueue', system: 'raw floor enqueue: the same statement as POST /jobs (c=16)', value: statement.rps, unit: 'jobs/s',
        detail: detail(statement), ratio: { value: statement.rps / floor.rps, of: 'create floor c=16' } },
      { row: 'enqueue', system: 'svc-gen POST /jobs / its statement\'s floor', value: mine.rps / statement.rps, unit: 'x',
        ratio: { value: mine.rps / statement.rps, of: 'raw floor enqueue', target: 0.9 } },
    );
  } finally {
    await own.stop();
  }
}

async function jobs(): Promise<void> {
  log('jobs: drains');
  const { sdk, perJob, perJobFloor, boss, graphile } = await benchDrains(log);
  const row = 'drain';
  const drained = (summary: DrainSummary) => `CPU ${summary.cpuPerJob.toFixed(3)} ms/job; ${summary.runs.map((run) => run.jobs).join('/')} jobs, `
    + `shortest ${summary.shortestSeconds.toFixed(1)} s`;
  lines.push(
    { row, system: summaryName(sdk), value: sdk.rate, unit: 'jobs/s', detail: drained(sdk),
      ratio: { value: sdk.rate / graphile.rate, of: 'graphile-worker', target: 1 } },
    { row, system: 'svc-gen SDK / pg-boss', value: sdk.rate / boss.rate, unit: 'x', ratio: { value: sdk.rate / boss.rate, of: 'pg-boss', target: 1 } },
    { row, system: summaryName(perJob), value: perJob.rate, unit: 'jobs/s', detail: drained(perJob),
      ratio: { value: perJob.rate / perJobFloor.rate, of: 'its floor', target: 0.9 } },
    { row, system: summaryName(perJobFloor), value: perJobFloor.rate, unit: 'jobs/s', detail: drained(perJobFloor) },
    { row, system: summaryName(boss), value: boss.rate, unit: 'jobs/s', detail: drained(boss) },
    { row, system: summaryName(graphile), value: graphile.rate, unit: 'jobs/s', detail: drained(graphile) },
  );
}

const summaryName = (summary: DrainSummary) => summary.system.name;

async function start(): Promise<void> {
  for (const mode of ['installed'] as const) {
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
log(`load average at the start: ${loadavg().map((load) => load.toFixed(2)).join(', ')}`);
if (ROWS.has('read') || ROWS.has('create') || ROWS.has('enqueue')) {
  const meter = await CpuMeter.open();
  try {
    await records(meter);
  } finally {
    await meter.close();
  }
}
if (ROWS.has('jobs')) await jobs();
if (ROWS.has('start')) await start();
print();
console.log(`\n(${((Date.now() - began) / 1000).toFixed(0)} s; ${SECONDS} s per HTTP measurement; ratios are within this run; `
  + `load average ${loadavg().map((load) => load.toFixed(2)).join(', ')} at the end, ${cpus().length} CPUs; drains: ${JSON.stringify(DRAIN_SETTINGS)})`);
process.exit(0);
