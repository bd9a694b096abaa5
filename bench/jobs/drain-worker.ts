/**
 * The SDK side of the drain benchmark, in a process of its own so that the
 * server's event loop is not shared with the workers'. Runs WORKERS workers
 * (capacity CAPACITY, no-op handler) until TARGET jobs are acknowledged, then
 * prints `drained <ms>`.
 */
import { createWorker } from '../../worker/index.ts';

const target = Number(process.env.TARGET);
const workers = Array.from({ length: Number(process.env.WORKERS ?? 4) }, () => createWorker({
  baseUrl: process.env.BASE_URL!, token: process.env.WORKER_TOKEN!, queues: ['bench'],
  capacity: Number(process.env.CAPACITY ?? 50), visibilitySecs: 60, pollIntervalMs: 20, handleSignals: false,
  handler: () => null,
  onError: (error) => process.stderr.write(`worker error: ${String(error)}\n`),
}));
const started = performance.now();
for (const worker of workers) void worker.start();
const timer = setInterval(() => {
  const completed = workers.reduce((sum, worker) => sum + worker.stats.completed, 0);
  if (completed < target) return;
  clearInterval(timer);
  process.stdout.write(`drained ${performance.now() - started}\n`);
  void Promise.all(workers.map((worker) => worker.stop())).then(() => process.exit(0));
}, 5);
