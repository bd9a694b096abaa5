/**
 * `npm run bench:jobs`: drains of no-op jobs by svc-gen (installed, from
 * dist/: its worker SDK, and a worker on the specification's per-job
 * routes, beside that worker on their floor, per-job-floor.ts), pg-boss and graphile-worker, each at its documented best
 * (docs/performance.md cites the settings), each in processes of its own, on
 * one Postgres, timed alike (drain.ts): a standing start, one clock read in
 * the database, CPU per job beside each rate, interleaved rounds and medians.
 *
 *   BENCH_ROUNDS (default 3), BENCH_WARM_JOBS (default 2000), BENCH_JOBS (the
 *   fewest jobs a measured drain has, default 5000: more when a system drains
 *   faster than 1000 jobs/s, so that no drain lasts under 3 s),
 *   BENCH_SDK_WORKERS (default 4) x BENCH_SDK_CAPACITY (default 400).
 */
import { join, resolve } from 'node:path';
import { compareDrains, type DrainSummary } from './drain.ts';
import { graphileJobs, pgBossJobs, svcJobs, type JobSystem } from './systems.ts';
import { startInstalled } from '../performance/installed.ts';
import { spawnChild, type Child } from '../performance/processes.ts';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

export const DRAIN_SETTINGS = {
  rounds: env('BENCH_ROUNDS', 3),
  warm: env('BENCH_WARM_JOBS', 2000),
  least: env('BENCH_JOBS', 5000),
  sdkWorkers: env('BENCH_SDK_WORKERS', 4),
  sdkCapacity: env('BENCH_SDK_CAPACITY', 400),
  /** Per-job routes: jobs completed at once, and jobs per lease (the route's most). */
  perJobInFlight: 16,
  perJobLease: 100,
  /** pg-boss: fetch loops (the SDK's workers) and jobs per fetch (the most one lease hands out). */
  bossLoops: env('BENCH_SDK_WORKERS', 4),
  bossBatch: 100,
  /** graphile-worker: its own performance preset (concurrentJobs 24, localQueue 500). */
  graphileConcurrency: 24,
  graphileLocalQueue: 500,
} as const;

export interface DrainRows {
  readonly sdk: DrainSummary;
  readonly perJob: DrainSummary;
  /** The per-job routes' floor: the same worker statements behind a bare node:http server (per-job-floor.ts). */
  readonly perJobFloor: DrainSummary;
  readonly boss: DrainSummary;
  readonly graphile: DrainSummary;
}

/** The four drains, interleaved, on an installed svc-gen server of their own (stopped before returning). */
export async function benchDrains(log: (line: string) => void): Promise<DrainRows> {
  const s = DRAIN_SETTINGS;
  const service = await startInstalled('small', { SVC_DB_POOL_SIZE: '20' });
  const systems: JobSystem[] = [];
  let floor: Child | undefined;
  try {
    const token = await service.workerToken(['bench']);
    floor = await spawnChild(['--import', 'tsx', join(import.meta.dirname, 'per-job-floor.ts')],
      { DATABASE_URL: service.database.url, POOL_SIZE: '20' }, 'per-job floor');
    const perJob = { SYSTEM: 'per-job', WORKER_TOKEN: token, IN_FLIGHT: String(s.perJobInFlight), LEASE: String(s.perJobLease) };
    systems.push(
      svcJobs(service, `svc-gen SDK (${s.sdkWorkers} workers x capacity ${s.sdkCapacity})`, {
        SYSTEM: 'sdk', WORKER_TOKEN: token, WORKERS: String(s.sdkWorkers), CAPACITY: String(s.sdkCapacity),
      }),
      svcJobs(service, `svc-gen per-job routes (lease ${s.perJobLease}, ${s.perJobInFlight} in flight)`, perJob),
      svcJobs(service, 'per-job floor: the same statements behind bare node:http', perJob, { url: floor.ready, pid: floor.pid }),
      await pgBossJobs(`pg-boss (localConcurrency ${s.bossLoops}, batchSize ${s.bossBatch}, notify)`, {
        SYSTEM: 'pg-boss', LOCAL_CONCURRENCY: String(s.bossLoops), BATCH: String(s.bossBatch),
      }),
      await graphileJobs(`graphile-worker (concurrentJobs ${s.graphileConcurrency}, localQueue ${s.graphileLocalQueue}, batched completes)`, {
        SYSTEM: 'graphile', CONCURRENCY: String(s.graphileConcurrency), LOCAL_QUEUE: String(s.graphileLocalQueue),
      }),
    );
    // BENCH_ONLY=sdk,graphile...: those alone (profiling); the comparison needs all five.
    const only = process.env.BENCH_ONLY?.split(',');
    const measured = only ? systems.filter((system) => only.includes(system.consumer.SYSTEM)) : systems;
    const summaries = await compareDrains(measured, { rounds: s.rounds, warm: s.warm, least: s.least, log });
    const [sdk, perJobRoutes, perJobFloor, boss, graphile] = systems.map((system) => summaries.find((summary) => summary.system === system)!);
    return { sdk, perJob: perJobRoutes, perJobFloor, boss, graphile };
  } finally {
    for (const system of systems) await system.close();
    await floor?.stop();
    await service.stop();
  }
}

function print(rows: DrainRows): void {
  const all = [rows.sdk, rows.perJob, rows.perJobFloor, rows.boss, rows.graphile].filter(Boolean);
  if (all.length < 5) return;
  const width = Math.max(...all.map((row) => row.system.name.length));
  console.log(`\n${'system'.padEnd(width)}  ${'drain jobs/s'.padStart(12)}  ${'CPU ms/job'.padStart(10)}  shortest drain`);
  for (const row of all) {
    console.log(`${row.system.name.padEnd(width)}  ${String(Math.round(row.rate)).padStart(12)}  ${row.cpuPerJob.toFixed(3).padStart(10)}  `
      + `${row.shortestSeconds.toFixed(1)} s (${row.runs.map((run) => run.jobs).join(', ')} jobs)`);
  }
  const ratio = (a: DrainSummary, b: DrainSummary) => `${(a.rate / b.rate).toFixed(2)}x`;
  console.log(`\nSDK / graphile-worker ${ratio(rows.sdk, rows.graphile)}, SDK / pg-boss ${ratio(rows.sdk, rows.boss)}, `
    + `per-job routes / their floor ${ratio(rows.perJob, rows.perJobFloor)}`);
}

if (resolve(process.argv[1] ?? '') === resolve(import.meta.filename)) {
  const started = Date.now();
  print(await benchDrains((line) => process.stderr.write(`${line}\n`)));
  console.log(`\n(${((Date.now() - started) / 1000).toFixed(0)} s)`);
  process.exit(0);
}
