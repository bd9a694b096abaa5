/**
 * The durable job queue: app plane (enqueue, poll), worker plane (lease,
 * heartbeat, progress, complete, fail), admin plane (worker tokens, stats,
 * recent), the reclaim sweep, the retention sweep (retention.ts), the fold of
 * the job counters (counts.ts), and `ctx.services.jobs` for other capabilities.
 */
import { fileURLToPath } from 'node:url';
import { defineCapability, type ServiceContext } from '../core/index.ts';
import { preparesStatements } from '../db/index.ts';
import { enqueueCte, enqueueInTx, enqueueJobs, enqueueOneInTx } from './enqueue.ts';
import { badRequest } from '../http/errors.ts';
import { authenticateWorker, heldJob } from './workers.ts';
import { internalStatements } from './plane.ts';
import { reclaimExpired, startReclaimer } from './reclaim.ts';
import { startFold } from './counts.ts';
import { startJobRetention } from './retention.ts';
import { mountAdminRoutes } from './routes/admin.ts';
import { mountAppRoutes } from './routes/app.ts';
import { mountControlRoutes } from './routes/control.ts';
import { CONTROL_PATHS } from './openapi.ts';
import { mountWorkerRoutes } from './routes/worker.ts';
import { getJob, mayWatchJob } from './view.ts';
import type { EnqueueInput, JobQueue } from './types.ts';

export type {
  JobQueue, InternalQueue, EnqueueInput, Caller, JobView, JobStatus, RowJob, HeldJob, WorkerIdentity, EnqueueInTxOptions,
} from './types.ts';
export type { LeasedJob } from './lease.ts';
export { INTERNAL_QUEUE_PREFIX, isInternalQueue } from './input.ts';
export { JOB_STATUSES } from './types.ts';
export { retryDelaySecs } from './backoff.ts';

function createJobQueue(ctx: ServiceContext<'events' | 'audit'>): JobQueue {
  const { db } = ctx;
  const { events } = ctx.services;
  const logs = { events, audit: ctx.services.audit, prepared: preparesStatements(ctx) };
  const reserved = new Map<string, string>();
  const refuseReserved = (inputs: readonly EnqueueInput[]) => {
    for (const input of inputs) {
      const use = typeof input?.queue === 'string' ? reserved.get(input.queue.trim()) : undefined;
      if (use !== undefined) throw badRequest(`queue ${input.queue} is reserved: ${use}`, { field: 'queue' });
    }
  };
  return {
    async enqueue(input, caller) {
      refuseReserved([input]);
      const [job] = await enqueueJobs(db, logs, [input], caller);
      return job;
    },
    enqueueMany(inputs, caller) {
      refuseReserved(inputs);
      return enqueueJobs(db, logs, inputs, caller);
    },
    enqueueIn: (t, inputs, caller, options) => enqueueInTx(t, logs, inputs, caller, options),
    enqueueCte: (rowJobs, caller, prefix, options) => enqueueCte(logs, rowJobs, caller, prefix, options),
    reserveQueue: (queue, use) => void reserved.set(queue, use),
    authenticateWorker: (token) => authenticateWorker(db, token),
    heldJob: (id, leaseId, workerId) => heldJob(db, id, leaseId, workerId),
    get: (id, scope) => getJob(db, id, scope),
    reclaim: () => reclaimExpired(db, events),
    enqueueOne: (t, input, caller, options) => enqueueOneInTx(t, logs, input, caller, options),
    // The worker plane's own statements, called in process (plane.ts).
    internal: internalStatements(db, events, logs.prepared),
  };
}

function guardJobChannels(ctx: ServiceContext<'realtime'>): void {
  const realtime = ctx.services.realtime;
  if (!realtime) {
    ctx.log.warn('realtime tier absent: job progress is not published');
    return;
  }
  realtime.guardChannels('job:', (principal, scope, channel) =>
    mayWatchJob(ctx.db, channel.slice('job:'.length), principal.userId, principal.role === 'Admin', scope));
}

/** A job's history (GraphQL recordHistory, model `Job`): for whoever may watch its channel. */
function registerJobStream(ctx: ServiceContext<'streams'>): void {
  ctx.services.streams.register('Job', async ({ principal, scope }, id) =>
    principal !== null && mayWatchJob(ctx.db, id, principal.userId, principal.role === 'Admin', scope));
}

export const jobs = defineCapability({
  name: 'jobs',
  provides: ['jobs'],
  requires: ['events', 'audit', 'realtime', 'streams', 'auth', 'metrics', 'openapi'],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const queue = createJobQueue(ctx);
    ctx.services.jobs = queue;
    guardJobChannels(ctx);
    registerJobStream(ctx);
    const { events } = ctx.services;
    // The session-checking authenticator: the auth capability, which this one requires, provided it.
    const { auth } = ctx.services;
    // Fixed paths before `/jobs/:id`, which would otherwise shadow them.
    mountAdminRoutes(ctx.router, auth, ctx.db, ctx.services.audit);
    mountControlRoutes(ctx.router, { auth, db: ctx.db, events, audit: ctx.services.audit });
    ctx.services.openapi.add(CONTROL_PATHS);
    mountWorkerRoutes(ctx.router, {
      db: ctx.db, events, realtime: ctx.services.realtime, log: ctx.log, metrics: ctx.services.metrics,
          prepared: preparesStatements(ctx),
    });
    mountAppRoutes(ctx.router, auth, queue, ctx.services.audit);
    const stopReclaimer = startReclaimer(ctx.db, events, ctx.log, ctx.config.jobs.reclaimIntervalSecs);
    const fold = startFold(ctx.db, ctx.log);
    const { retainSucceededHours: succeededHours, retainDeadDays: deadDays } = ctx.config.jobs;
    const { metrics } = ctx.services;
    const retention = startJobRetention(ctx.db, ctx.log, { succeededHours, deadDays }, (deleted) => {
      metrics.observeJobsDeleted('succeeded', deleted.succeeded);
      metrics.observeJobsDeleted('dead', deleted.dead);
    });
    return {
      async stop() {
        await Promise.all([stopReclaimer(), fold.stop(), retention.stop()]);
      },
    };
  },
});
