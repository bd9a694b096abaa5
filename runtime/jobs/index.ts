/**
 * The durable job queue: app plane (enqueue, poll), worker plane (lease,
 * heartbeat, progress, complete, fail), admin plane (worker tokens, stats,
 * recent), the reclaim sweep, and `ctx.services.jobs` for other capabilities.
 */
import { fileURLToPath } from 'node:url';
import type { Capability, ServiceContext } from '../service/types.ts';
import { enqueueJobs } from './enqueue.ts';
import { reclaimExpired, startReclaimer } from './reclaim.ts';
import { mountAdminRoutes } from './routes/admin.ts';
import { mountAppRoutes } from './routes/app.ts';
import { mountWorkerRoutes } from './routes/worker.ts';
import { getJob, mayWatchJob } from './view.ts';
import type { JobQueue } from './types.ts';

export type { JobQueue, EnqueueInput, Caller, JobView, JobStatus } from './types.ts';
export { JOB_STATUSES } from './types.ts';
export { retryDelaySecs } from './backoff.ts';

function createJobQueue(ctx: ServiceContext): JobQueue {
  const { db } = ctx;
  const { events } = ctx.services;
  return {
    async enqueue(input, caller) {
      const [job] = await enqueueJobs(db, events, [input], caller);
      return job;
    },
    enqueueMany: (inputs, caller) => enqueueJobs(db, events, inputs, caller),
    get: (id, tenantId) => getJob(db, id, tenantId ?? undefined),
    reclaim: () => reclaimExpired(db, events),
  };
}

function guardJobChannels(ctx: ServiceContext): void {
  const realtime = ctx.services.realtime;
  if (!realtime) {
    ctx.log.warn('realtime tier absent: job progress is not published');
    return;
  }
  realtime.guardChannels('job:', (principal, tenantId, channel) =>
    mayWatchJob(ctx.db, channel.slice('job:'.length), principal.userId, principal.role === 'Admin', tenantId));
}

export const jobs: Capability = {
  name: 'jobs',
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const queue = createJobQueue(ctx);
    ctx.services.jobs = queue;
    guardJobChannels(ctx);
    const { events } = ctx.services;
    // Looked up per request: the auth capability may wrap the authenticator (session checks).
    const auth = { authenticate: (token: string) => ctx.services.auth.authenticate(token) };
    // Fixed paths before `/jobs/:id`, which would otherwise shadow them.
    mountAdminRoutes(ctx.router, auth, ctx.db);
    mountWorkerRoutes(ctx.router, { db: ctx.db, events, realtime: ctx.services.realtime, log: ctx.log });
    mountAppRoutes(ctx.router, auth, queue);
    const stopReclaimer = startReclaimer(ctx.db, events, ctx.log, ctx.config.jobs.reclaimIntervalSecs);
    return { stop: stopReclaimer };
  },
};
