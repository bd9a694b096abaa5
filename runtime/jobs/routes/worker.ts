/**
 * The worker plane (header X-Worker-Token): lease, heartbeat, progress,
 * complete (one or a batch), fail. A lease that is not current is 409 and
 * changes nothing.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import type { Db } from '../../db/index.ts';
import type { EventStore } from '../../events/index.ts';
import { badRequest, conflict, forbidden, unauthorized } from '../../http/errors.ts';
import type { Logger } from '../../log/index.ts';
import type { RealtimeBus } from '../../realtime/types.ts';
import { completeJobs, extendLease, failJob, type CompleteItem } from '../ack.ts';
import { clampInt, requireLeaseId, requireObject } from '../input.ts';
import { leaseJobs } from '../lease.ts';
import { authenticateWorker, mayLease, requireQueues, type WorkerIdentity } from '../workers.ts';

const MAX_BATCH = 1000;
const leaseLost = () => conflict('lease lost');

declare module 'koa' {
  interface DefaultState {
    worker?: WorkerIdentity;
  }
}

function requireWorker(db: Db): Koa.Middleware {
  return async function requireWorker(koa, next) {
    const token = koa.get('x-worker-token');
    if (!token) throw unauthorized('worker token required');
    const worker = await authenticateWorker(db, token);
    if (!worker) throw unauthorized('invalid or revoked worker token');
    koa.state.worker = worker;
    await next();
  };
}

export interface WorkerPlane {
  readonly db: Db;
  readonly events: EventStore;
  /** Absent when the realtime tier is not part of this service: progress then only extends the lease. */
  readonly realtime: RealtimeBus | undefined;
  readonly log: Logger;
}

export function mountWorkerRoutes(router: Router, plane: WorkerPlane): void {
  const { db, events } = plane;
  const worker = requireWorker(db);

  router.post('/jobs/lease', worker, async (koa) => {
    const body = requireObject(koa.request.body);
    const identity = koa.state.worker!;
    const queues = requireQueues(body.queues);
    const denied = queues.find((queue) => !mayLease(identity, queue));
    if (denied !== undefined) throw forbidden(`worker token may not lease queue ${denied}`);
    const jobs = await leaseJobs(db, events, {
      queues, workerId: identity.id, tenantId: identity.tenantId,
      capacity: clampInt(body.capacity, 'capacity', 1, 1, 100),
      visibilitySecs: clampInt(body.visibilitySecs, 'visibilitySecs', 30, 1, 86_400),
    });
    koa.body = { jobs };
  });

  router.post('/jobs/complete', worker, async (koa) => {
    const items = completeItems(requireObject(koa.request.body).items);
    koa.body = await completeJobs(db, events, items);
  });

  router.post('/jobs/:id/heartbeat', worker, async (koa) => {
    const body = requireObject(koa.request.body);
    // Without visibilitySecs the lease is extended by the length it was leased for.
    const visibility = body.visibilitySecs == null ? null : clampInt(body.visibilitySecs, 'visibilitySecs', 30, 1, 86_400);
    const extended = await extendLease(db, koa.params.id, requireLeaseId(body), visibility);
    if (!extended) throw leaseLost();
    koa.status = 204;
  });

  router.post('/jobs/:id/progress', worker, async (koa) => {
    const body = requireObject(koa.request.body);
    const leaseId = requireLeaseId(body);
    const update = progressUpdate(koa.params.id, body);
    const extended = await extendLease(db, koa.params.id, leaseId, null);
    if (!extended) throw leaseLost();
    // Progress is best effort: the lease was extended, so a realtime hiccup must not fail the call.
    await plane.realtime?.publish(extended.tenantId, `job:${koa.params.id}`, update)
      .catch((err) => plane.log.warn({ err, jobId: koa.params.id }, 'job progress publish failed'));
    koa.status = 204;
  });

  router.post('/jobs/:id/complete', worker, async (koa) => {
    const body = requireObject(koa.request.body);
    const { completed } = await completeJobs(db, events, [
      { id: koa.params.id, leaseId: requireLeaseId(body), result: body.result },
    ]);
    if (completed.length === 0) throw leaseLost();
    koa.status = 204;
  });

  router.post('/jobs/:id/fail', worker, async (koa) => {
    const body = requireObject(koa.request.body);
    const leaseId = requireLeaseId(body);
    if (typeof body.error !== 'string') throw badRequest('error must be a string');
    if (body.retryable !== undefined && typeof body.retryable !== 'boolean') throw badRequest('retryable must be a boolean');
    const outcome = await failJob(db, events, koa.params.id, leaseId, body.error, body.retryable !== false);
    if (!outcome) throw leaseLost();
    koa.body = outcome;
  });
}

function completeItems(value: unknown): CompleteItem[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_BATCH) {
    throw badRequest(`items must be an array of 1 to ${MAX_BATCH} {id, leaseId, result}`);
  }
  return value.map((item) => {
    const entry = requireObject(item);
    if (typeof entry.id !== 'string' || entry.id === '') throw badRequest('items[].id is required');
    return { id: entry.id, leaseId: requireLeaseId(entry), result: entry.result };
  });
}

function progressUpdate(jobId: string, body: Record<string, unknown>) {
  const percent = body.percent;
  if (typeof percent !== 'number' || !Number.isFinite(percent)) throw badRequest('percent must be a number');
  if (body.message !== undefined && body.message !== null && typeof body.message !== 'string') {
    throw badRequest('message must be a string');
  }
  return { jobId, percent, message: body.message ?? null, data: body.data ?? null };
}
