/**
 * The worker plane (header X-Worker-Token): lease, heartbeat, progress,
 * complete (one or a batch), fail. A lease that is not current is 409 and
 * changes nothing. Each call with valid input is one statement (plane.ts).
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import type { Db } from '../../db/index.ts';
import type { EventStore } from '../../events/index.ts';
import { badRequest, conflict, forbidden, SafeError, unauthorized } from '../../http/errors.ts';
import { rejectTooDeep } from '../../http/input.ts';
import type { Logger } from '../../log/index.ts';
import type { RealtimeBus } from '../../realtime/types.ts';
import { completeJobs, extendLease, failJob, leaseHeld, type CompleteItem, type LeaseLatency } from '../ack.ts';
import type { Metrics } from '../../metrics/index.ts';
import { clampInt, requireLeaseId, requireObject } from '../input.ts';
import { leaseJobs } from '../lease.ts';
import { CompleteCombiner, isVersionRace, workerStatements, type WorkerStatements } from '../plane.ts';
import { retryJitter } from '../backoff.ts';
import { authenticateWorker, hashToken, mayLease, requireQueues, TOKEN_PREFIX, type WorkerIdentity } from '../workers.ts';

const MAX_BATCH = 1000;
const leaseLost = () => conflict('lease lost');

declare module 'koa' {
  interface DefaultState {
    worker?: WorkerIdentity;
  }
}

const invalidWorker = () => unauthorized('invalid or revoked worker token');

function requireWorker(db: Db): Koa.Middleware {
  return async function requireWorker(koa, next) {
    const token = koa.get('x-worker-token');
    if (!token) throw unauthorized('worker token required');
    const worker = await authenticateWorker(db, token);
    if (!worker) throw invalidWorker();
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
  /** Absent outside a service (metrics are then not recorded). */
  readonly metrics?: Metrics;
  /** Run the plane's statements as named prepared statements (not behind a transaction pooler). */
  readonly prepared?: boolean;
}

export function mountWorkerRoutes(router: Router, plane: WorkerPlane): void {
  const { db, events } = plane;
  const worker = requireWorker(db);
  const fast = workerStatements(db, events, plane.prepared ?? false);
  // Per-job completes arriving together share a statement (plane.ts).
  const combiner = fast ? new CompleteCombiner(fast) : null;
  const observe = (latencies: readonly LeaseLatency[]) => {
    for (const { queue, seconds } of latencies) plane.metrics?.observeLeaseToComplete(queue, seconds);
  };

  // Step by step (token, then lease, then the change, each its own statement): the path of
  // invalid input, whose errors must come in this order, and of a lost version race.
  const stepwise = {
    async lease(koa: Koa.Context) {
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
    },
    async completeMany(koa: Koa.Context) {
      const items = completeItems(requireObject(koa.request.body).items);
      const { completed, stale, leaseLatencies } = await completeJobs(db, events, items);
      observe(leaseLatencies);
      koa.body = { completed, stale };
    },
    async heartbeat(koa: Koa.Context) {
      const body = requireObject(koa.request.body);
      const leaseId = await currentLease(koa.params.id, body);
      // Without visibilitySecs the lease is extended by the length it was leased for.
      const visibility = body.visibilitySecs == null ? null : clampInt(body.visibilitySecs, 'visibilitySecs', 30, 1, 86_400);
      const extended = await extendLease(db, koa.params.id, leaseId, visibility);
      if (!extended) throw leaseLost();
      koa.status = 204;
    },
    async progress(koa: Koa.Context) {
      const body = requireObject(koa.request.body);
      const leaseId = await currentLease(koa.params.id, body);
      const update = progressUpdate(koa.params.id, body);
      const extended = await extendLease(db, koa.params.id, leaseId, null);
      if (!extended) throw leaseLost();
      await publishProgress(extended.tenantId, update);
      koa.status = 204;
    },
    async complete(koa: Koa.Context) {
      const body = requireObject(koa.request.body);
      const leaseId = await currentLease(koa.params.id, body);
      const { completed, leaseLatencies } = await completeJobs(db, events, [{ id: koa.params.id, leaseId, result: completeResult(body) }]);
      if (completed.length === 0) throw leaseLost();
      observe(leaseLatencies);
      koa.status = 204;
    },
    async fail(koa: Koa.Context) {
      const body = requireObject(koa.request.body);
      const leaseId = await currentLease(koa.params.id, body);
      const { error, retryable } = failInput(body);
      const outcome = await failJob(db, events, koa.params.id, leaseId, error, retryable);
      if (!outcome) throw leaseLost();
      koa.body = outcome;
    },
  };

  // Each call checks the lease before the body's other fields: a stale lease is 409 whatever else is wrong.
  const currentLease = async (id: string, body: Record<string, unknown>): Promise<string> => {
    const leaseId = requireLeaseId(body);
    if (!(await leaseHeld(db, id, leaseId))) throw leaseLost();
    return leaseId;
  };

  // Progress is best effort: the lease was extended, so a realtime hiccup must not fail the call.
  const publishProgress = async (tenantId: string | null, update: ReturnType<typeof progressUpdate>) => {
    await plane.realtime?.publish(tenantId, `job:${update.jobId}`, update)
      .catch((err) => plane.log.warn({ err, jobId: update.jobId }, 'job progress publish failed'));
  };

  /**
   * A route: one statement (plane.ts) when the input is valid, else the
   * step-by-step handler, which answers every error as before and in the
   * same order (401, then 400 / 403 / 409 as each step finds them).
   * `run` answers and returns true, or returns false for invalid input.
   */
  const route = (slow: (koa: Koa.Context) => Promise<void>, run: (koa: Koa.Context, statements: WorkerStatements, tokenHash: string) => Promise<boolean>): Koa.Middleware[] => {
    const viaSteps = (koa: Koa.Context) => worker(koa, () => slow(koa));
    if (!fast) return [viaSteps];
    return [async function workerCall(koa) {
      const token = koa.get('x-worker-token');
      // A missing or malformed token needs no statement: the step-by-step path answers 401.
      if (!token.startsWith(TOKEN_PREFIX)) return viaSteps(koa);
      try {
        if (await run(koa, fast, hashToken(token))) return;
      } catch (error) {
        if (!isVersionRace(error)) throw error;
      }
      return viaSteps(koa);
    }];
  };

  router.post('/jobs/lease', ...route(stepwise.lease, async (koa, statements, tokenHash) => {
    const input = valid(() => {
      const body = requireObject(koa.request.body);
      return {
        queues: requireQueues(body.queues),
        capacity: clampInt(body.capacity, 'capacity', 1, 1, 100),
        visibilitySecs: clampInt(body.visibilitySecs, 'visibilitySecs', 30, 1, 86_400),
      };
    });
    if (!input) return false;
    const outcome = await statements.lease(tokenHash, input);
    if (!outcome.worker) throw invalidWorker();
    const identity = outcome.worker;
    const denied = input.queues.find((queue) => !mayLease(identity, queue));
    if (denied !== undefined) throw forbidden(`worker token may not lease queue ${denied}`);
    koa.body = { jobs: outcome.jobs };
    return true;
  }));

  router.post('/jobs/complete', ...route(stepwise.completeMany, async (koa, statements, tokenHash) => {
    const items = valid(() => completeItems(requireObject(koa.request.body).items));
    if (!items) return false;
    const { worker: known, completed, stale, leaseLatencies } = await statements.complete(tokenHash, items);
    if (!known) throw invalidWorker();
    observe(leaseLatencies);
    koa.body = { completed, stale };
    return true;
  }));

  router.post('/jobs/:id/heartbeat', ...route(stepwise.heartbeat, async (koa, statements, tokenHash) => {
    const input = valid(() => {
      const body = requireObject(koa.request.body);
      const visibility = body.visibilitySecs == null ? null : clampInt(body.visibilitySecs, 'visibilitySecs', 30, 1, 86_400);
      return { leaseId: requireLeaseId(body), visibility };
    });
    if (!input) return false;
    const extended = await statements.extend(tokenHash, koa.params.id, input.leaseId, input.visibility);
    if (extended === 'unauthorized') throw invalidWorker();
    if (!extended) throw leaseLost();
    koa.status = 204;
    return true;
  }));

  router.post('/jobs/:id/progress', ...route(stepwise.progress, async (koa, statements, tokenHash) => {
    const input = valid(() => {
      const body = requireObject(koa.request.body);
      return { leaseId: requireLeaseId(body), update: progressUpdate(koa.params.id, body) };
    });
    if (!input) return false;
    const extended = await statements.extend(tokenHash, koa.params.id, input.leaseId, null);
    if (extended === 'unauthorized') throw invalidWorker();
    if (!extended) throw leaseLost();
    await publishProgress(extended.tenantId, input.update);
    koa.status = 204;
    return true;
  }));

  router.post('/jobs/:id/complete', ...route(stepwise.complete, async (koa, _statements, tokenHash) => {
    const input = valid(() => {
      const body = requireObject(koa.request.body);
      return { id: koa.params.id, leaseId: requireLeaseId(body), result: completeResult(body) };
    });
    if (!input) return false;
    const outcome = await combiner!.complete(tokenHash, input);
    if (!outcome.worker) throw invalidWorker();
    if (!outcome.completed) throw leaseLost();
    if (outcome.leaseLatency) observe([outcome.leaseLatency]);
    koa.status = 204;
    return true;
  }));

  router.post('/jobs/:id/fail', ...route(stepwise.fail, async (koa, statements, tokenHash) => {
    const input = valid(() => {
      const body = requireObject(koa.request.body);
      return { leaseId: requireLeaseId(body), ...failInput(body) };
    });
    if (!input) return false;
    const outcome = await statements.fail(tokenHash, koa.params.id, input.leaseId, input.error, input.retryable, retryJitter());
    if (outcome === 'unauthorized') throw invalidWorker();
    if (!outcome) throw leaseLost();
    koa.body = outcome;
    return true;
  }));
}

/** The input `read` returns, or null when it refuses it (400): the step-by-step path then answers. */
function valid<T>(read: () => T): T | null {
  try {
    return read();
  } catch (error) {
    if (error instanceof SafeError && error.status === 400) return null;
    throw error;
  }
}

function failInput(body: Record<string, unknown>): { error: string; retryable: boolean } {
  if (typeof body.error !== 'string') throw badRequest('error must be a string');
  if (body.retryable !== undefined && typeof body.retryable !== 'boolean') throw badRequest('retryable must be a boolean');
  return { error: body.error, retryable: body.retryable !== false };
}

function completeItems(value: unknown): CompleteItem[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_BATCH) {
    throw badRequest(`items must be an array of 1 to ${MAX_BATCH} {id, leaseId, result}`);
  }
  return value.map((item, index) => {
    const entry = requireObject(item);
    if (typeof entry.id !== 'string' || entry.id === '') throw badRequest('items[].id is required');
    rejectTooDeep(entry.result, `items.${index}.result`);
    return { id: entry.id, leaseId: requireLeaseId(entry), result: entry.result };
  });
}

/** A job's result is free-form JSON, bounded in depth like every other (runtime/http/input.ts). */
function completeResult(body: Record<string, unknown>): unknown {
  rejectTooDeep(body.result, 'result');
  return body.result;
}

/** `percent`, `message` and `data` are each optional (CONTRACT section 14). */
function progressUpdate(jobId: string, body: Record<string, unknown>) {
  const percent = body.percent ?? null;
  if (percent !== null && (typeof percent !== 'number' || !Number.isFinite(percent))) throw badRequest('percent must be a number');
  if (body.message !== undefined && body.message !== null && typeof body.message !== 'string') {
    throw badRequest('message must be a string');
  }
  rejectTooDeep(body.data, 'data');
  return { jobId, percent, message: body.message ?? null, data: body.data ?? null };
}
