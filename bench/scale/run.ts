/**
 * `npm run bench:scale`: does a request, or a start, cost the same on a big
 * database as on a small one? Two databases of the bench schema
 * (bench/scale/schema.ts), seeded in SQL (seed.ts): the small size
 * (BENCH_SCALE_SMALL, default 10,000 deals) and the big one
 * (BENCH_SCALE_RECORDS, default 10,000,000 deals over 1,000 tenants, plus one
 * tenant with a tenth of them, as many events, half as many audit entries and
 * jobs; BENCH_SCALE_EVENTS, _AUDIT, _JOBS, _BIG_TENANT override). On each:
 * start-up to /ready of `svc-gen start` as a child process
 * (BENCH_SCALE_STARTS, default 5; BENCH_SCALE_START_MODE=installed for the
 * compiled dist/), then the rows of measure.ts. Prints both
 * columns side by side with their ratio; a ratio above 2 is flagged `!`.
 *
 * Refuses to seed when the free disk (df of Postgres' data directory) is
 * under twice the seed's estimate. Databases are named `scale_bench_*` and
 * dropped at the end, also on error or Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, statfsSync, symlinkSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { admin, createTestDatabase, dropStaleTestDatabases, queryOnce, type TestDatabase } from '../../test/helpers/db.ts';
import { buildFixture, REPO_ROOT, startTestService, TEST_JWT_SECRET } from '../../test/helpers/service.ts';
import { dirname, join, resolve } from 'node:path';
import { measureRequests, percentiles, type Latency, type Row } from './measure.ts';
import { BIG_TENANT, diskNeeded, seed, seedConnection, sizesFor, TENANT, type Sizes } from './seed.ts';

const SCHEMA = resolve(import.meta.dirname, 'schema.ts');
/** BENCH_SCALE_START_MODE=installed starts the compiled dist/ (run `npm run build` first), as an installed package runs; default: this checkout's bin (tsx). */
/** The package laid out as `npm install` would (bin/, dist/, package.json), as bench/start does: its bin runs dist/. */
function installedBin(): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-installed-'));
  for (const folder of ['bin', 'cli']) mkdirSync(join(root, folder));
  for (const file of ['bin/svc-gen.mjs', 'cli/resolve-hook.mjs', 'package.json']) copyFileSync(join(REPO_ROOT, file), join(root, file));
  for (const folder of ['dist', 'templates', 'node_modules']) symlinkSync(join(REPO_ROOT, folder), join(root, folder));
  return join(root, 'bin', 'svc-gen.mjs');
}

const BIN = process.env.BENCH_SCALE_START_MODE === 'installed' ? installedBin() : join(REPO_ROOT, 'bin', 'svc-gen.mjs');
const STARTS = Number(process.env.BENCH_SCALE_STARTS ?? 5);
const SERVICE_ENV = { RATE_LIMIT_RPS: '10000000', SVC_LOG_LEVEL: 'error', SVC_PUBLIC_READ_MODELS: 'Deal' };
const databases = new Set<TestDatabase>();

const say = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const gb = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`;

/** Free bytes of the file system of Postgres' data directory (or of its nearest parent this user may look into). */
async function freeDiskBytes(): Promise<{ dir: string; free: number }> {
  const dir = await admin(async (c) => (await c.query<{ dir: string }>(`select setting as dir from pg_settings where name = 'data_directory'`)).rows[0].dir);
  for (let path = dir; ; path = dirname(path)) {
    try {
      const stats = statfsSync(path);
      return { dir: path, free: stats.bavail * stats.bsize };
    } catch (error) {
      if (path === dirname(path)) throw error;
    }
  }
}

async function checkDisk(s: Sizes): Promise<void> {
  const { dir, free } = await freeDiskBytes();
  const needed = diskNeeded(s);
  say(`disk: ${gb(free)} free under ${dir}, the seed needs about ${gb(needed)}`);
  if (free < 2 * needed) throw new Error(`refusing to seed: ${gb(free)} free, ${gb(2 * needed)} wanted (twice the estimate); lower BENCH_SCALE_RECORDS`);
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Spawn `svc-gen start` to the first 200 of /ready, in ms; stopped with SIGTERM afterwards. */
async function startOnce(dir: string, url: string): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, 'start', dir], {
    env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: url, JWT_SECRET: TEST_JWT_SECRET, PORT: String(port), HOST: '127.0.0.1', ...SERVICE_ENV },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const gone = new Promise<void>((done) => child.once('exit', () => done()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`svc-gen start exited: ${stderr}`);
      const ok = await fetch(`http://127.0.0.1:${port}/ready`).then((r) => r.status === 200, () => false);
      if (ok) return performance.now() - started;
      if (performance.now() - started > 120_000) throw new Error(`not ready after 120 s: ${stderr}`);
      await new Promise((wake) => setTimeout(wake, 5));
    }
  } finally {
    child.kill('SIGTERM');
    await gone;
  }
}

async function databaseBytes(name: string, url: string): Promise<number> {
  const [row] = await queryOnce<{ bytes: string }>(url, 'select pg_database_size($1)::text as bytes', [name]);
  return Number(row.bytes);
}

/**
 * The audit statistics' rollups (runtime/audit/rollup.ts) hold the seeded log
 * (seed.ts folds it, as the runtime's fold would have); entries written since
 * (the starts' own) are folded by the running service. The statistics row is
 * measured once the fold has caught up, as in steady state.
 */
async function rollupsCaughtUp(label: string, url: string): Promise<void> {
  const started = performance.now();
  const [{ last }] = await queryOnce<{ last: string }>(url, 'select coalesce(max(id), 0)::text as last from svc_audit');
  for (;;) {
    const [{ folded }] = await queryOnce<{ folded: string }>(url, 'select folded_to::text as folded from svc_audit_rollup_state');
    if (BigInt(folded) >= BigInt(last)) break;
    if (performance.now() - started > 3_600_000) throw new Error(`audit rollups not caught up after an hour (${folded} of ${last})`);
    await new Promise((wake) => setTimeout(wake, 500));
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  say(`${label}: audit rollups caught up to entry ${last} ${seconds} s after the measured service started`);
  console.log(`${label}: audit rollups caught up ${seconds} s after the measured service started`);
}

/**
 * BENCH_SCALE_WAIT_FILE: on a shared machine, each size's measurements wait
 * (after its seed, which needs no quiet) until this file exists, so that
 * whoever shares the machine can be told to pause first.
 */
async function waitForQuiet(label: string): Promise<void> {
  const file = process.env.BENCH_SCALE_WAIT_FILE;
  if (!file) return;
  say(`${label}: waiting for ${file} before measuring`);
  while (!existsSync(file)) await new Promise((wake) => setTimeout(wake, 1_000));
  say(`${label}: measuring (load average ${loadavg().map((n) => n.toFixed(2)).join(', ')})`);
}

/**
 * The plan of the count behind `totalCount` (runtime/records/read.ts
 * countRows: exact up to SVC_GRAPHQL_EXACT_COUNT_LIMIT rows, read through a
 * limit), for the tenant and the big tenant, printed to the log: what a
 * count row's growth from one size to the other is made of.
 */
async function explainCounts(label: string, url: string): Promise<void> {
  for (const tenant of [TENANT, BIG_TENANT]) {
    const plan = await queryOnce<{ 'QUERY PLAN': string }>(url, `explain (analyze, buffers, costs off, timing on)
      select count(*)::int as n from (select 1 from deal t where t.tenant_id = $1 and t.deleted_at is null order by t.tenant_id, t.id limit 10001) s`, [tenant]);
    say(`${label}: plan of the totalCount count, tenant ${tenant}:\n${plan.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}`);
  }
}

/** One size: a database, its seed, start-ups, requests; the database is dropped before returning. */
async function measureSize(label: string, s: Sizes): Promise<Row[]> {
  say(`${label}: ${s.records.toLocaleString('en')} deals (+${s.bigTenant.toLocaleString('en')} of the big tenant), `
    + `${s.events.toLocaleString('en')} events, ${s.audit.toLocaleString('en')} audit entries, ${s.jobs.toLocaleString('en')} jobs`);
  await checkDisk(s);
  const dir = await buildFixture(SCHEMA);
  const database = await createTestDatabase('scale_bench', { fixture: SCHEMA });
  databases.add(database);
  try {
    const before = await databaseBytes(database.name, database.url);
    // A first start on the empty database: projections built, consumers' cursors created.
    const first = await startTestService({ fixture: SCHEMA, database, env: SERVICE_ENV });
    const projection = first.ctx.services.projections.tableOf('Deal')!;
    await first.close();
    const seeding = performance.now();
    const connection = await seedConnection(database.url);
    try {
      await seed(connection, s, projection, (line) => say(`  ${line}`));
    } finally {
      await connection.end();
    }
    const used = (await databaseBytes(database.name, database.url)) - before;
    say(`${label}: seeded in ${((performance.now() - seeding) / 1000).toFixed(1)} s, ${gb(used)} of disk`);
    console.log(`${label}: seed ${((performance.now() - seeding) / 1000).toFixed(1)} s, disk ${gb(used)}`);
    await waitForQuiet(label);
    const starts: number[] = [];
    for (let i = 0; i < STARTS; i++) starts.push(await startOnce(dir, database.url));
    say(`  start-up to /ready: ${starts.map((ms) => Math.round(ms)).join(', ')} ms`);
    const svc = await startTestService({ fixture: SCHEMA, database, env: { ...SERVICE_ENV, SVC_DB_POOL_SIZE: '10' } });
    try {
      await rollupsCaughtUp(label, database.url);
      const rows: Row[] = [[`start-up to /ready (${STARTS} starts)`, percentiles(starts)], ...(await measureRequests(svc))];
      await explainCounts(label, database.url);
      return rows;
    } finally {
      await svc.close();
    }
  } finally {
    await database.drop();
    databases.delete(database);
  }
}

function print(smallLabel: string, bigLabel: string, small: readonly Row[], big: readonly Row[]): void {
  const cell = (n: number) => n.toFixed(1).padStart(9);
  const ratio = (a: number, b: number) => {
    const r = b / Math.max(a, 0.001);
    return `${r.toFixed(1).padStart(6)}x${r > 2 ? ' !' : '  '}`;
  };
  console.log(`\n${'ms'.padEnd(58)}${`${smallLabel} p50`.padStart(9)}${`p99`.padStart(9)}${`${bigLabel} p50`.padStart(11)}${'p99'.padStart(9)}   ratio p50   ratio p99`);
  for (const [name, a] of small) {
    const b: Latency | undefined = big.find(([n]) => n === name)?.[1];
    if (!b) continue;
    console.log(`${name.padEnd(58)}${cell(a.p50)}${cell(a.p99)}  ${cell(b.p50)}${cell(b.p99)}   ${ratio(a.p50, b.p50)}  ${ratio(a.p99, b.p99)}`);
  }
  console.log('(! : more than 2x the small figure)');
}

const label = (n: number) => (n >= 1e6 ? `${+(n / 1e6).toFixed(1)}M` : `${+(n / 1e3).toFixed(1)}k`);

async function main(): Promise<void> {
  // A run killed outright (SIGKILL) could not drop its databases: those older than two hours go now.
  await dropStaleTestDatabases('scale_bench');
  const smallRecords = Number(process.env.BENCH_SCALE_SMALL ?? 10_000);
  const bigRecords = Number(process.env.BENCH_SCALE_RECORDS ?? 10_000_000);
  const small = await measureSize(label(smallRecords), sizesFor(smallRecords));
  const big = await measureSize(label(bigRecords), sizesFor(bigRecords, process.env));
  print(label(smallRecords), label(bigRecords), small, big);
}

async function dropAll(): Promise<void> {
  for (const database of databases) await database.drop().catch(() => undefined);
}

process.once('SIGINT', () => void dropAll().finally(() => process.exit(130)));
process.once('SIGTERM', () => void dropAll().finally(() => process.exit(143)));
// A failure outside main's chain (a background promise, a thrown callback) drops the databases too.
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.once(event, (error) => {
    console.error(error);
    void dropAll().finally(() => process.exit(1));
  });
}
main().then(() => process.exit(0), async (error) => {
  console.error(error);
  await dropAll();
  process.exit(1);
});
