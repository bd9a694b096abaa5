/**
 * The SDK side of the drain benchmark, in a process of its own so that the
 * server's event loop is not shared with the workers'. Runs WORKERS workers
 * (capacity CAPACITY, no-op handler) until WARM + TARGET jobs are
 * acknowledged, then prints `drained <ms>`: the time the last TARGET took.
 * The first WARM run unmeasured in the same process, so that this process is
 * as warm as an in-process baseline after its own warm-up drain (a fresh
 * process runs the SDK and its HTTP client interpreted at first).
 */
import { createWorker } from '../../worker/index.ts';

const target = Number(process.env.TARGET);
const warm = Number(process.env.WARM ?? 0);
const workers = Array.from({ length: Number(process.env.WORKERS ?? 4) }, () => createWorker({
  baseUrl: process.env.BASE_URL!, token: process.env.WORKER_TOKEN!, queues: ['bench'],
  capacity: Number(process.env.CAPACITY ?? 50), visibilitySecs: 60, pollIntervalMs: 20, handleSignals: false,
  handler: () => null,
  onError: (error) => process.stderr.write(`worker error: ${String(error)}\n`),
}));
let started = warm === 0 ? performance.now() : null;
for (const worker of workers) void worker.start();
const timer = setInterval(() => {
  const completed = workers.reduce((sum, worker) => sum + worker.stats.completed, 0);
  if (started === null && completed >= warm) started = performance.now();
  if (started === null || completed < warm + target) return;
  clearInterval(timer);
  process.stdout.write(`drained ${performance.now() - started}\n`);
  void Promise.all(workers.map((worker) => worker.stop())).then(() => process.exit(0));
}, 5);
