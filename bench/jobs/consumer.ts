/**
 * One job system's workers, in a process of their own (`SYSTEM`), running a
 * no-op handler on queue `bench` until SIGTERM. Prints `ready` once its
 * workers are started and idle: the bench then queues the jobs in one commit
 * and times the drain in the database (drains.ts), so that every system
 * starts alike, standing, warm and polling.
 *
 *   sdk       svc-gen's worker SDK as installed (WORKER_MODULE, the compiled
 *             dist/worker), WORKERS workers of capacity CAPACITY, over HTTP
 *   per-job   the specification's per-job routes, as a user without the SDK
 *             writes a worker: lease LEASE jobs, then POST /jobs/{id}/complete
 *             each, IN_FLIGHT at a time (keep-alive node:http)
 *   graphile  graphile-worker, its documented performance settings (docs/performance.md)
 *   pg-boss   pg-boss, LOCAL_CONCURRENCY fetch loops of BATCH jobs, woken by NOTIFY
 */
import { workerHttp } from './worker-http.ts';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const int = (name: string, fallback: number) => Number(env(name, String(fallback)));

type Stop = () => Promise<void>;

const SYSTEMS: Record<string, () => Promise<Stop>> = {
  async sdk() {
    const { createWorker } = await import(env('WORKER_MODULE')) as typeof import('../../worker/index.ts');
    const workers = Array.from({ length: int('WORKERS', 4) }, () => createWorker({
      baseUrl: env('BASE_URL'), token: env('WORKER_TOKEN'), queues: ['bench'], capacity: int('CAPACITY', 100),
      visibilitySecs: 60, pollIntervalMs: int('POLL_MS', 20), handleSignals: false,
      handler: () => null,
      onError: (error) => process.stderr.write(`worker error: ${String(error)}\n`),
    }));
    for (const worker of workers) void worker.start();
    return async () => void (await Promise.all(workers.map((worker) => worker.stop())));
  },
  'per-job': async () => perJob(),
  async graphile() {
    const { run, Logger } = await import('graphile-worker');
    const concurrentJobs = int('CONCURRENCY', 24);
    const runner = await run({
      connectionString: env('DATABASE_URL'), noHandleSignals: true,
      logger: new Logger(() => () => undefined),
      taskList: { noop: async () => undefined },
      preset: {
        worker: {
          concurrentJobs, maxPoolSize: concurrentJobs + 1,
          localQueue: { size: int('LOCAL_QUEUE', 500), refetchDelay: { durationMs: 10 } },
          completeJobBatchDelay: 0, failJobBatchDelay: 0,
        },
      },
    });
    return () => runner.stop();
  },
  async 'pg-boss'() {
    const { PgBoss } = await import('pg-boss');
    const boss = new PgBoss({ connectionString: env('DATABASE_URL'), schedule: false, supervise: false, useListenNotify: true });
    boss.on('error', (error) => process.stderr.write(`pg-boss error: ${String(error)}\n`));
    await boss.start();
    await boss.work('bench', {
      batchSize: int('BATCH', 100), localConcurrency: int('LOCAL_CONCURRENCY', 4),
      pollingIntervalSeconds: 0.5, burstWhenBatchFull: true,
    }, async () => undefined);
    return () => new Promise<void>((resolve) => {
      boss.once('stopped', () => resolve());
      void boss.stop({ graceful: true, close: true });
    });
  },
};

/** The per-job worker: IN_FLIGHT lanes completing one job each at a time, one lease request in flight at most. */
function perJob(): Stop {
  const baseUrl = new URL(env('BASE_URL'));
  const token = env('WORKER_TOKEN');
  const inFlight = int('IN_FLIGHT', 16);
  const leaseSize = int('LEASE', 100);
  const http = workerHttp(baseUrl, token, inFlight);
  const { post } = http;
  const pending: Array<{ id: string; leaseId: string }> = [];
  let leasing: Promise<void> | null = null;
  let stopping = false;
  const lease = async () => {
    const reply = await post('/jobs/lease', { queues: ['bench'], capacity: leaseSize, visibilitySecs: 60 });
    if (reply.status !== 200) throw new Error(`lease: ${reply.status} ${reply.text}`);
    const { jobs } = JSON.parse(reply.text) as { jobs: Array<{ id: string; leaseId: string }> };
    pending.push(...jobs);
    // An empty queue: poll again in 20 ms, as the SDK's workers do in this bench.
    if (jobs.length === 0) await new Promise((wake) => setTimeout(wake, 20));
  };
  const leaseOnce = () => (leasing ??= lease().finally(() => (leasing = null)));
  const lane = async () => {
    while (!stopping) {
      // Lease ahead while the last ones are completed, as a pipelining worker would.
      if (pending.length < inFlight) void leaseOnce();
      const job = pending.shift();
      if (!job) {
        await leaseOnce();
        continue;
      }
      const reply = await post(`/jobs/${encodeURIComponent(job.id)}/complete`, { leaseId: job.leaseId, result: null });
      if (reply.status !== 204) throw new Error(`complete: ${reply.status} ${reply.text}`);
    }
  };
  const lanes = Promise.all(Array.from({ length: inFlight }, lane));
  lanes.catch((error) => {
    process.stderr.write(`per-job worker: ${String(error)}\n`);
    process.exit(1);
  });
  return async () => {
    stopping = true;
    await lanes;
    http.close();
  };
}

const start = SYSTEMS[env('SYSTEM')];
if (!start) throw new Error(`unknown SYSTEM ${process.env.SYSTEM}`);
const stop = await start();
process.once('SIGTERM', () => void stop().then(() => process.exit(0), () => process.exit(1)));
process.stdout.write('ready\n');
