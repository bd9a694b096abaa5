/**
 * `svc-gen/worker`: the SDK for processes that run jobs of a svc-gen service.
 *
 *   const worker = createWorker({ baseUrl, token, queues: ['email'], capacity: 20,
 *     handler: async (job) => { await job.progress(50, 'half way'); return { sent: true }; } });
 *   await worker.start(); // resolves after SIGTERM/SIGINT or worker.stop()
 *
 * Action workers (queue `actions`) write back with `job.graphql(...)` and
 * dispatch per action with `actionHandler<ActionPayload>({...})` (docs/actions.md).
 */
export { createWorker, Worker, NonRetryableError, actionHandler } from './runner.ts';
export type { JobContext, JobHandler, WorkerOptions, WorkerStats, ActionHandlers } from './runner.ts';
export { WorkerClient, WorkerHttpError } from './client.ts';
export type { LeasedJob, FailOutcome, ClientOptions, GraphQLResult, LeaseRef } from './client.ts';
