/**
 * `svc-gen/worker`: the SDK for processes that run jobs of a svc-gen service.
 *
 *   const worker = createWorker({ baseUrl, token, queues: ['email'], capacity: 20,
 *     handler: async (job) => { await job.progress(50, 'half way'); return { sent: true }; } });
 *   await worker.start(); // resolves after SIGTERM/SIGINT or worker.stop()
 */
export { createWorker, Worker, NonRetryableError } from './runner.ts';
export type { JobContext, JobHandler, WorkerOptions, WorkerStats } from './runner.ts';
export { WorkerClient, WorkerHttpError } from './client.ts';
export type { LeasedJob, FailOutcome, ClientOptions } from './client.ts';
