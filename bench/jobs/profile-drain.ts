/**
 * `npx tsx bench/jobs/profile-drain.ts [sdk|graphile|per-job]`: where a drain's
 * CPU goes, for one job system as the drains run it (run.ts: installed svc-gen
 * from dist/, the consumer in a process of its own). After a warm-up drain,
 * one drain of PROFILE_JOBS (default 10000) jobs runs under `perf record -a -g`;
 * the samples of the system's processes (its workers, svc-gen's server started
 * with --perf-basic-prof, and the Postgres backends of its database, polled
 * during the drain) are then summed by process kind and by function: per job,
 * in µs of CPU, with the top functions of each kind (self time; for
 * Postgres also inclusive of what each calls).
 *
 *   PROFILE_TOP (default 25): functions listed per kind;
 *   PROFILE_KEEP=1 keeps the perf.data file (its path is printed);
 *   PROFILE_PGOPTIONS: settings for the server's connections (libpq's PGOPTIONS).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { graphileJobs, svcJobs, consumerArgs, type JobSystem } from './systems.ts';
import { startInstalled, type InstalledService } from '../performance/installed.ts';
import { ADMIN_URL } from '../../test/helpers/db.ts';
import { createEventStore } from '../../runtime/events/index.ts';
import { newId } from '../../runtime/ids.ts';
import { workerStatementTexts } from '../../runtime/jobs/plane.ts';
import { hashToken } from '../../runtime/jobs/workers.ts';
import { BENCH_APPLICATION, spawnChild } from '../performance/processes.ts';

const which = process.argv[2] ?? 'sdk';
const JOBS = Number(process.env.PROFILE_JOBS ?? 10_000);
const TOP = Number(process.env.PROFILE_TOP ?? 25);
const HZ = 997;

async function drain(system: JobSystem, jobs: number, during?: () => void): Promise<number> {
  let started = 0;
  await system.seed(jobs, async () => void (started = performance.now()));
  for (;;) {
    during?.();
    if ((await system.remaining()) === 0) break;
    await new Promise((wake) => setTimeout(wake, 25));
  }
  const ms = performance.now() - started;
  await system.tidy();
  return ms;
}

let service: InstalledService | undefined;
let system: JobSystem;
let workerTokenHash: string | null = null;
if (which === 'graphile') {
  system = await graphileJobs('graphile-worker', { SYSTEM: 'graphile', CONCURRENCY: '24', LOCAL_QUEUE: '500' });
} else {
  // PROFILE_PGOPTIONS: the server's connections' settings (libpq's PGOPTIONS), e.g. `-c plan_cache_mode=force_custom_plan`.
  service = await startInstalled('small', {
    SVC_DB_POOL_SIZE: '20', NODE_OPTIONS: '--perf-basic-prof', ...(process.env.PROFILE_PGOPTIONS ? { PGOPTIONS: process.env.PROFILE_PGOPTIONS } : {}),
  });
  const token = await service.workerToken(['bench']);
  workerTokenHash = hashToken(token);
  system = svcJobs(service, which, which === 'per-job'
    ? { SYSTEM: 'per-job', WORKER_TOKEN: token, IN_FLIGHT: '16', LEASE: '100' }
    : { SYSTEM: 'sdk', WORKER_TOKEN: token, WORKERS: '4', CAPACITY: '400' });
}
const consumer = await spawnChild(consumerArgs, { ...system.consumer, NODE_OPTIONS: '--perf-basic-prof' }, system.name);
const admin = new pg.Client({ connectionString: ADMIN_URL, application_name: BENCH_APPLICATION });
await admin.connect();
const dir = mkdtempSync(join(tmpdir(), 'svc-drain-perf-'));
const data = join(dir, 'perf.data');
try {
  const warm = await drain(system, 2000);
  process.stderr.write(`warm-up: 2000 jobs in ${warm.toFixed(0)} ms\n`);
  const backends = new Set<number>();
  let polling: Promise<void> | null = null;
  // Each poll also samples what the active backends run: a statement profile by wall time (pg_stat_statements needs a restart).
  const active = new Map<string, number>();
  const longest = new Map<string, number>();
  // PROFILE_EXPLAIN=1: once a lease statement has run over a second, EXPLAIN ANALYZE the same lease (rolled back) beside it.
  let explained: Promise<string> | null = null;
  const explainLease = async (): Promise<string> => {
    const texts = workerStatementTexts(createEventStore(null as never));
    const client = new pg.Client({ connectionString: (service as InstalledService).database.url, application_name: BENCH_APPLICATION });
    await client.connect();
    try {
      await client.query('begin');
      const { rows } = await client.query({ text: `explain (analyze, buffers) ${texts.lease.text}`, values: texts.lease.values({
        who: workerTokenHash!, queues: ['bench'], capacity: 100, visibilitySecs: 60, eventIds: Array.from({ length: 100 }, () => newId()) }) });
      await client.query('rollback');
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    } finally {
      await client.end();
    }
  };
  let polls = 0;
  const poll = () => {
    polling ??= admin.query<{ pid: number; state: string | null; query: string; xact_secs: number | null; application_name: string }>(
      `select pid, state, query, application_name, extract(epoch from now() - xact_start)::float8 as xact_secs,
              extract(epoch from now() - query_start)::float8 as query_secs
         from pg_stat_activity where datname = $1 and application_name <> $2`,
      [system.backends.database, BENCH_APPLICATION]).then(({ rows }) => {
      polls++;
      for (const row of rows) {
        backends.add(row.pid);
        // Transactions open long in this database hold back the horizon: dead index entries are then never skipped.
        if (row.xact_secs !== null && row.xact_secs > 0.5) {
          const key = `${row.application_name} ${row.state}: ${row.query.replace(/\s+/g, ' ').slice(0, 100)}`;
          const seen = longest.get(key) ?? 0;
          if (row.xact_secs > seen) longest.set(key, row.xact_secs);
        }
        if (row.state !== 'active') continue;
        if (process.env.PROFILE_EXPLAIN && !explained && workerTokenHash && (row as unknown as { query_secs: number }).query_secs > 1
          && row.query.includes('svc_worker_tokens')) explained = explainLease().catch((error) => `explain failed: ${String(error)}`);
        const text = row.query.replace(/\s+/g, ' ');
        const key = text.includes('leased as (') ? '(the plane\'s lease)' : text.includes('done as (') ? '(the plane\'s complete)' : text.slice(0, 140);
        active.set(key, (active.get(key) ?? 0) + 1);
      }
    }).finally(() => (polling = null));
  };
  poll();
  await polling;
  const perf = spawn('perf', ['record', '-a', '-g', '-F', String(HZ), '-o', data], { stdio: ['ignore', 'ignore', 'ignore'] });
  await new Promise((wake) => setTimeout(wake, 500)); // perf's start-up
  const ms = await drain(system, JOBS, poll);
  perf.kill('SIGINT');
  await new Promise((done) => perf.once('exit', done));
  await polling;
  process.stderr.write(`profiled drain: ${JOBS} jobs in ${ms.toFixed(0)} ms (${Math.round(JOBS / ms * 1000)} jobs/s)\n`);
  const kinds = new Map<number, string>([[consumer.pid, 'workers']]);
  for (const pid of system.servers) kinds.set(pid, 'server');
  for (const pid of backends) kinds.set(pid, 'postgres');
  report(data, kinds);
  console.log(`\nstatements running, backends per poll (${polls} polls of pg_stat_activity during the drain):`);
  for (const [text, n] of [...active].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`${(n / polls).toFixed(2).padStart(6)}  ${text}`);
  if (explained) console.log(`\nEXPLAIN ANALYZE of a lease beside a lease running over 1 s:\n${await explained}`);
  console.log('\ntransactions open over 0.5 s in the database during the drain (longest seen, s):');
  for (const [text, secs] of [...longest].sort((a, b) => b[1] - a[1]).slice(0, 8)) console.log(`${secs.toFixed(1).padStart(6)}  ${text}`);
} finally {
  await admin.end();
  await consumer.stop();
  await system.close();
  await service?.stop();
  if (process.env.PROFILE_KEEP) process.stderr.write(`perf data kept: ${data}\n`);
  else rmSync(dir, { recursive: true, force: true });
}

/** Samples of the processes in `kinds`, per job, by kind, by self function and (Postgres) by the first executor frame. */
function report(file: string, kinds: Map<number, string>): void {
  // Only the system's processes: perf script's own filter keeps the text small.
  const pids = [...kinds.keys()].join(',');
  const script = execFileSync('perf', ['script', '-i', file, '--pid', pids, '-F', 'pid,ip,sym'], { maxBuffer: 2 ** 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const byKind = new Map<string, number>();
  const self = new Map<string, Map<string, number>>();
  const under = new Map<string, number>();
  for (const block of script.split('\n\n')) {
    const lines = block.split('\n').map((line) => line.trim()).filter(Boolean);
    if (lines.length === 0) continue;
    const pid = Number(/^(\d+)/.exec(lines[0])?.[1]);
    const kind = kinds.get(pid);
    if (!kind) continue;
    const frames = lines.slice(1).map((line) => line.replace(/^[0-9a-f]+ /, '').replace(/\+0x[0-9a-f]+$/, ''));
    byKind.set(kind, (byKind.get(kind) ?? 0) + 1);
    const top = kind === 'postgres' ? frames[0] ?? '?' : (frames.find((f) => /^(JS:|Function:|LazyCompile:)?[*~^]/.test(f)) ?? `(native) ${frames[0]}`);
    const table = self.get(kind) ?? new Map<string, number>();
    table.set(top.slice(0, 110), (table.get(top.slice(0, 110)) ?? 0) + 1);
    self.set(kind, table);
    if (kind === 'postgres') {
      // Inclusive time: every function on the stack, once per sample.
      for (const frame of new Set(frames)) under.set(frame, (under.get(frame) ?? 0) + 1);
    }
  }
  const perJob = (samples: number) => ((samples * 1e6) / HZ / JOBS).toFixed(1).padStart(7);
  const total = [...byKind.values()].reduce((a, b) => a + b, 0);
  console.log(`\n${which}: CPU per job ${perJob(total)} µs (${total} samples at ${HZ} Hz)`);
  for (const [kind, n] of byKind) console.log(`  ${kind.padEnd(9)} ${perJob(n)} µs/job`);
  for (const [kind, table] of self) {
    console.log(`\n${kind}, by function (self), µs/job:`);
    for (const [name, n] of [...table].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${perJob(n)}  ${name}`);
  }
  if (under.size > 0) {
    console.log('\npostgres, by function with what it calls (inclusive), µs/job:');
    for (const [name, n] of [...under].sort((a, b) => b[1] - a[1]).slice(0, 3 * TOP)) console.log(`${perJob(n)}  ${name}`);
  }
}

