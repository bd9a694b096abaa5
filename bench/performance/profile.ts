/**
 * `npx tsx bench/performance/profile.ts <create|plain|bound|floor|stack|read|floor-read|enqueue|floor-enqueue|complete>`:
 * where one hot request's time goes. Runs the server in this process under
 * load from a child process, and reports per request: the statements sent
 * to Postgres (every `Client.query` of node-postgres, BEGIN and COMMIT
 * included, so round trips), their texts, and the server process's CPU time.
 * Run it under `node --cpu-prof --import tsx` for a flame graph of the same.
 *
 *   PROFILE_SECONDS (default 5), PROFILE_WARM_SECONDS (load before the window, default 1),
 *   PROFILE_CONNECTIONS (default 16);
 *   PROFILE_RATE=N holds the load at N requests/s: CPU per request then compares
 *   across runs and code versions on a shared machine (saturated, it moves with
 *   the throughput the machine's other load leaves);
 *   PROFILE_CPU=FILE.cpuprofile writes a V8 CPU profile of the measured window
 *   only (read it with bench/performance/hot.ts or Chrome DevTools);
 *   PROFILE_PERF=FILE.data records the window with Linux `perf` (real CPU, kernel
 *   included; run as `node --perf-basic-prof --import tsx bench/performance/profile.ts MODE`
 *   so JavaScript frames have names, and read it with bench/performance/perf-hot.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { createRequire } from 'node:module';
import pg from 'pg';
import type { Server } from 'node:http';
import { createTestDatabase } from '../../test/helpers/db.ts';
import { startTestService } from '../../test/helpers/service.ts';
import { createJobsDatabase, mintWorker, startJobsService } from '../../test/jobs/helpers.ts';
import { perJobWorker } from '../jobs/svc.ts';
import { seedItemsSql, startEnqueueFloor, startFloor, startStackFloor } from '../records/baselines.ts';
import { runLoad } from '../records/load.ts';
import { processCpuMs } from '../cpu.ts';
import { recordPerf } from './perf-record.ts';

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 5);
/** Load before the measured window: V8 optimizes a server's hot code over its first seconds (its compiler threads' CPU). */
const WARM_SECONDS = Number(process.env.PROFILE_WARM_SECONDS ?? 1);
const CONNECTIONS = Number(process.env.PROFILE_CONNECTIONS ?? 16);
const RATE = process.env.PROFILE_RATE ? Number(process.env.PROFILE_RATE) : undefined;
const mode = process.argv[2] ?? 'create';

// Every statement the process sends, by text: through the project's pg and pg-promise's own copy of it.
const statements = new Map<string, number>();
let counting = false;
const pgPromisePg = createRequire(createRequire(import.meta.url).resolve('pg-promise')).resolve('pg');
for (const Client of new Set([pg.Client, (createRequire(import.meta.url)(pgPromisePg) as typeof pg).Client])) {
  const original = Client.prototype.query as (...args: unknown[]) => unknown;
  Client.prototype.query = function query(this: unknown, ...args: unknown[]) {
    if (counting) {
      const first = args[0] as string | { text?: string; name?: string };
      const text = typeof first === 'string' ? first : first?.text ?? `(named ${first?.name})`;
      // Literals folded: pg-promise inlines values into the text it sends (simple protocol).
      const key = text.replace(/\s+/g, ' ').replace(/'(?:[^']|'')*'/g, "'…'").replace(/(?<![$\w])\d+(?![\w])/g, 'N').trim();
      statements.set(key, (statements.get(key) ?? 0) + 1);
    }
    return original.apply(this, args);
  } as typeof Client.prototype.query;
}

/** CPU ms used so far by the Postgres backends connected to `database` (Linux /proc; 0 elsewhere). */
async function backendCpuMs(database: string): Promise<Map<number, number>> {
  const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [database]);
    const cpu = new Map<number, number>();
    for (const { pid } of rows) {
      const ms = processCpuMs(pid); // null: not on this host, or gone
      if (ms !== null) cpu.set(pid, ms);
    }
    return cpu;
  } finally {
    await admin.end();
  }
}

/** Read and write system calls of this process so far (Linux /proc; zeros elsewhere). */
function syscalls(): { reads: number; writes: number } {
  try {
    const io = readFileSync('/proc/self/io', 'utf8');
    return { reads: Number(/syscr: (\d+)/.exec(io)?.[1] ?? 0), writes: Number(/syscw: (\d+)/.exec(io)?.[1] ?? 0) };
  } catch {
    return { reads: 0, writes: 0 };
  }
}

interface Measured {
  readonly requests: number;
  /** Read and write system calls of the server process over the window (socket I/O included). */
  readonly syscalls: { reads: number; writes: number };
  readonly seconds: number;
  readonly cpuMs: number;
  /** CPU ms of the database's Postgres backends over the window (those alive at both ends). */
  readonly pgCpuMs: number;
  readonly extra?: Record<string, unknown>;
}

/** Counts requests on `server`, CPU of this process and of the database's backends while `work` runs. */
async function measure(server: Server, database: string, work: () => Promise<Record<string, unknown> | void>): Promise<Measured> {
  let requests = 0;
  const count = () => void requests++;
  server.on('request', count);
  statements.clear();
  const profiling = process.env.PROFILE_CPU ? new Session() : null;
  if (profiling) {
    profiling.connect();
    await profiling.post('Profiler.enable');
    await profiling.post('Profiler.start');
  }
  const pgBefore = await backendCpuMs(database);
  const perf = process.env.PROFILE_PERF ? await recordPerf(process.env.PROFILE_PERF) : null;
  counting = true;
  const io = syscalls();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const extra = (await work()) ?? undefined;
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  const ioAfter = syscalls();
  counting = false;
  if (perf) {
    await perf.stop();
    // What perf-hot.ts needs to put the samples per request: the window's requests, and the main thread (tid = pid).
    writeFileSync(`${process.env.PROFILE_PERF}.json`, JSON.stringify({ requests, tid: process.pid, seconds: (performance.now() - started) / 1000 }));
  }
  const pgAfter = await backendCpuMs(database);
  let pgCpuMs = 0;
  for (const [pid, ms] of pgAfter) if (pgBefore.has(pid)) pgCpuMs += ms - pgBefore.get(pid)!;
  if (profiling) {
    const { profile } = await profiling.post('Profiler.stop');
    writeFileSync(process.env.PROFILE_CPU!, JSON.stringify(profile));
    profiling.disconnect();
  }
  server.off('request', count);
  return {
    requests, seconds, cpuMs: (used.user + used.system) / 1000, pgCpuMs, extra,
    syscalls: { reads: ioAfter.reads - io.reads, writes: ioAfter.writes - io.writes },
  };
}

function report(name: string, m: Measured): void {
  const total = [...statements.values()].reduce((a, b) => a + b, 0);
  console.log(`\n${name}: ${m.requests} requests in ${m.seconds.toFixed(1)} s (${Math.round(m.requests / m.seconds)}/s), `
    + `server CPU ${(m.cpuMs * 1000 / m.requests).toFixed(0)} µs/request, Postgres CPU ${(m.pgCpuMs * 1000 / m.requests).toFixed(0)} µs/request, `
    + `${(total / m.requests).toFixed(2)} statements/request, `
    + `${(m.syscalls.writes / m.requests).toFixed(2)} write and ${(m.syscalls.reads / m.requests).toFixed(2)} read system calls/request`);
  if (m.extra) console.log(JSON.stringify(m.extra));
  for (const [text, n] of [...statements].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
    console.log(`  ${(n / m.requests).toFixed(2)}/req  ${(process.env.PROFILE_FULL ? text : text.slice(0, 220))}`);
  }
}

async function profileCreate(model = 'Item', fixture = resolve(import.meta.dirname, '..', 'records', 'schema.ts')): Promise<void> {
  const database = await createTestDatabase('svc_bench');
  const svc = await startTestService({
    fixture, database,
    env: { RATE_LIMIT_RPS: '10000000', SVC_DB_POOL_SIZE: '20', SVC_LOG_LEVEL: 'error' },
  });
  try {
    const token = await svc.token({ role: 'Sales', userId: 'bench' });
    const body = JSON.stringify({ query: `mutation($d: JSON!) { create(model: "${model}", data: $d) }`, variables: { d: { name: 'bench', price: 1 } } });
    const spec = { rate: RATE, url: `${svc.url}/graphql`, connections: CONNECTIONS, headers: { authorization: `Bearer ${token}` }, body };
    await runLoad({ ...spec, seconds: WARM_SECONDS });
    const m = await measure(svc.ctx.server, svc.database.name, async () => ({ ...(await runLoad({ ...spec, seconds: SECONDS })) }));
    report(`POST /graphql create ${model} c=${CONNECTIONS}`, m);
  } finally {
    await svc.close();
    await database.drop();
  }
}

async function profileRead(): Promise<void> {
  const database = await createTestDatabase('svc_bench');
  const svc = await startTestService({
    fixture: resolve(import.meta.dirname, '..', 'records', 'schema.ts'), database,
    env: { RATE_LIMIT_RPS: '10000000', SVC_DB_POOL_SIZE: '20', SVC_LOG_LEVEL: 'error' },
  });
  try {
    await svc.ctx.db.none(seedItemsSql('"item"', 10_000));
    await svc.ctx.db.none('analyze');
    const token = await svc.token({ role: 'Sales', userId: 'bench' });
    const body = JSON.stringify({ query: '{ records(model: "Item", limit: 20) }' });
    const spec = { rate: RATE, url: `${svc.url}/graphql`, connections: CONNECTIONS, headers: { authorization: `Bearer ${token}` }, body };
    await runLoad({ ...spec, seconds: WARM_SECONDS });
    const m = await measure(svc.ctx.server, svc.database.name, async () => ({ ...(await runLoad({ ...spec, seconds: SECONDS })) }));
    report(`POST /graphql records c=${CONNECTIONS}`, m);
  } finally {
    await svc.close();
    await database.drop();
  }
}

async function profileFloor(): Promise<void> {
  return floorOf('create');
}

async function profileFloorRead(): Promise<void> {
  return floorOf('records');
}

async function floorOf(workload: 'create' | 'records'): Promise<void> {
  // The floor's schema is the svc-gen one: start the service only to create the tables.
  const database = await createTestDatabase('svc_bench');
  const svc = await startTestService({ fixture: resolve(import.meta.dirname, '..', 'records', 'schema.ts'), database });
  if (workload === 'records') {
    await svc.ctx.db.none(seedItemsSql('"item"', 10_000));
    await svc.ctx.db.none('analyze');
  }
  await svc.close();
  const floor = await startFloor(database.url, 20);
  try {
    const body = workload === 'create' ? JSON.stringify({ name: 'bench', price: 1 }) : '{}';
    const spec = { rate: RATE, url: `${floor.url}/${workload}`, connections: CONNECTIONS, headers: {}, body };
    await runLoad({ ...spec, seconds: WARM_SECONDS });
    const m = await measure(floor.server, database.name, async () => ({ ...(await runLoad({ ...spec, seconds: SECONDS })) }));
    report(`floor ${workload} c=${CONNECTIONS}`, m);
  } finally {
    await floor.stop();
    await database.drop();
  }
}

/** The floor's create statement behind Koa + graphql-js (svc-gen's stack alone): what svc-gen adds is the rest. */
async function profileStack(): Promise<void> {
  const database = await createTestDatabase('svc_bench');
  const svc = await startTestService({ fixture: resolve(import.meta.dirname, '..', 'records', 'schema.ts'), database });
  await svc.close();
  const stack = await startStackFloor(database.url, 20);
  try {
    const body = JSON.stringify({ query: 'mutation($d: JSON!) { create(model: "Item", data: $d) }', variables: { d: { name: 'bench', price: 1 } } });
    const spec = { rate: RATE, url: `${stack.url}/graphql`, connections: CONNECTIONS, headers: {}, body };
    await runLoad({ ...spec, seconds: WARM_SECONDS });
    const m = await measure(stack.server, database.name, async () => ({ ...(await runLoad({ ...spec, seconds: SECONDS })) }));
    report(`Koa + graphql-js + floor create c=${CONNECTIONS}`, m);
  } finally {
    await stack.stop();
    await database.drop();
  }
}

async function profileEnqueue(): Promise<void> {
  const svc = await startJobsService({ env: { SVC_LOG_LEVEL: 'error', SVC_DB_POOL_SIZE: '20' } });
  try {
    const jwt = await svc.token({ role: 'Viewer', userId: 'bench' });
    const spec = { rate: RATE, url: `${svc.url}/jobs`, connections: CONNECTIONS, headers: { authorization: `Bearer ${jwt}` },
      body: JSON.stringify({ queue: 'enqueue-bench', kind: 'noop', payload: { n: 1 } }) };
    await runLoad({ ...spec, seconds: WARM_SECONDS });
    const m = await measure(svc.ctx.server, svc.database.name, async () => ({ ...(await runLoad({ ...spec, seconds: SECONDS })) }));
    report(`POST /jobs c=${CONNECTIONS}`, m);
  } finally {
    await svc.close();
  }
}

/** `POST /jobs`'s own statement behind a bare server: what svc-gen's enqueue adds is the rest. */
async function profileFloorEnqueue(): Promise<void> {
  // The jobs tables are the runtime's: start the service once to create them.
  const database = await createJobsDatabase();
  await (await startJobsService({ database })).close();
  // PROFILE_KOA=1: the same statement behind Koa + @koa/router (the stack alone).
  const floor = process.env.PROFILE_KOA ? await startStackFloor(database.url, 20) : await startEnqueueFloor(database.url, 20);
  try {
    const spec = { rate: RATE, url: `${floor.url}/${process.env.PROFILE_KOA ? 'koa/' : ''}jobs`, connections: CONNECTIONS, headers: {},
      body: JSON.stringify({ queue: 'enqueue-bench', kind: 'noop', payload: { n: 1 } }) };
    await runLoad({ ...spec, seconds: WARM_SECONDS });
    const m = await measure(floor.server, database.name, async () => ({ ...(await runLoad({ ...spec, seconds: SECONDS })) }));
    report(`${process.env.PROFILE_KOA ? 'Koa + ' : ''}floor POST /jobs c=${CONNECTIONS}`, m);
  } finally {
    await floor.stop();
    await database.drop();
  }
}

async function profileComplete(): Promise<void> {
  const count = Number(process.env.PROFILE_JOBS ?? 5000);
  const svc = await startJobsService({ env: { SVC_LOG_LEVEL: 'error', SVC_DB_POOL_SIZE: '20' } });
  try {
    const { token } = await mintWorker(svc, ['bench']);
    for (let at = 0; at < count; at += 1000) {
      const batch = Array.from({ length: Math.min(1000, count - at) }, (_, i) => ({ queue: 'bench', kind: 'noop', payload: { n: at + i } }));
      await svc.ctx.services.jobs.enqueueMany(batch, { actorId: null, tenantId: null });
    }
    const m = await measure(svc.ctx.server, svc.database.name, async () => ({ ...(await perJobWorker(svc.url, token, count, CONNECTIONS)) }));
    report(`per-job worker (lease 50, complete each, ${CONNECTIONS} in flight), ${count} jobs`, m);
  } finally {
    await svc.close();
  }
}

const modes: Record<string, () => Promise<void>> = {
  create: () => profileCreate(),
  // The actions bench's two models: `Bound` commits an action's job with each create, `Plain` does not.
  plain: () => profileCreate('Plain', resolve(import.meta.dirname, '..', 'actions', 'schema.ts')),
  bound: () => profileCreate('Bound', resolve(import.meta.dirname, '..', 'actions', 'schema.ts')),
  read: profileRead, floor: profileFloor, stack: profileStack, 'floor-read': profileFloorRead, enqueue: profileEnqueue, 'floor-enqueue': profileFloorEnqueue, complete: profileComplete,
};
if (!modes[mode]) throw new Error(`unknown mode ${mode}: one of ${Object.keys(modes).join(', ')}`);
await modes[mode]();
process.exit(0);
