/**
 * The worker plane (header X-Worker-Token): lease, heartbeat, progress,
 * complete (one or a batch), fail. Each call is one statement (plane.ts),
 * which answers 401 (token unknown or revoked), 403 (a queue the token
 * lacks) and 409 (a lease not current; it changes nothing). Invalid input
 * runs no statement; its 400 waits, in this order, for a missing or invalid
 * token (401), a stale lease (409: every call checks the lease before the
 * body's other fields, CONTRACT section 14) and a queue the token lacks
 * (403), which a read-only `check` answers.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import type { Db } from '../../db/index.ts';
import type { EventStore } from '../../events/index.ts';
import { badRequest, conflict, forbidden, SafeError, unauthorized } from '../../http/errors.ts';
import { rejectTooDeep } from '../../http/input.ts';
import type { Logger } from '../../log/index.ts';
import type { RealtimeBus } from '../../realtime/types.ts';
import type { Metrics } from '../../metrics/index.ts';
import { clampInt, requireLeaseId, requireObject } from '../input.ts';
import { CompleteCombiner, LeaseCombiner, workerStatements, type CompleteItem, type LeaseLatency } from '../plane.ts';
import { hashToken, mayLease, requireQueues, TOKEN_PREFIX, type WorkerIdentity } from '../workers.ts';

const MAX_BATCH = 1000;
const leaseLost = () => conflict('lease lost');
const invalidWorker = () => unauthorized('invalid or revoked worker token');

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

/** The SHA-256 of the call's worker token; a missing or malformed one is 401 without a statement. */
function tokenHashOf(koa: Koa.Context): string {
  const token = koa.get('x-worker-token');
  if (!token) throw unauthorized('worker token required');
  if (!token.startsWith(TOKEN_PREFIX)) throw invalidWorker();
  return hashToken(token);
}

const isBadRequest = (error: unknown) => error instanceof SafeError && error.status === 400;

export function mountWorkerRoutes(router: Router, plane: WorkerPlane): void {
  const statements = workerStatements(plane.db, plane.events, plane.prepared ?? false);
  // Per-job completes arriving together share a statement (plane.ts).
  const combiner = new CompleteCombiner(statements);
  // Concurrent leases of one token for the same queues share a statement (plane.ts).
  const leases = new LeaseCombiner(statements);
  const observe = (latencies: readonly LeaseLatency[]) => {
    for (const { queue, seconds } of latencies) plane.metrics?.observeLeaseToComplete(queue, seconds);
  };

  /** The token's worker, or 401: for a call whose input is invalid, before its 400. */
  const knownWorker = async (tokenHash: string, lease: { id: string; leaseId: string } | null = null): Promise<WorkerIdentity> => {
    const { worker, held } = await statements.check(tokenHash, lease);
    if (!worker) throw invalidWorker();
    if (lease && !held) throw leaseLost();
    return worker;
  };

  const refuseDenied = (worker: WorkerIdentity, queues: readonly string[]) => {
    const denied = queues.find((queue) => !mayLease(worker, queue));
    if (denied !== undefined) throw forbidden(`worker token may not lease queue ${denied}`);
  };

  /**
   * A per-job call's input: its lease id, then `rest` of the body. A 400 in
   * either is answered after the token's 401, one in `rest` after the lease's 409.
   */
  const jobCall = async <T>(koa: Koa.Context, tokenHash: string, rest: (body: Record<string, unknown>) => T) => {
    let lease: { id: string; leaseId: string } | null = null;
    try {
      const body = requireObject(koa.request.body);
      lease = { id: koa.params.id, leaseId: requireLeaseId(body) };
      return { leaseId: lease.leaseId, ...rest(body) };
    } catch (error) {
      if (isBadRequest(error)) await knownWorker(tokenHash, lease);
      throw error;
    }
  };

  // Progress is best effort: the lease was extended, so a realtime hiccup must not fail the call.
  const publishProgress = async (tenantId: string | null, update: ReturnType<typeof progressUpdate>) => {
    await plane.realtime?.publish(tenantId, `job:${update.jobId}`, update)
      .catch((err) => plane.log.warn({ err, jobId: update.jobId }, 'job progress publish failed'));
  };

  router.post('/jobs/lease', async function lease(koa) {
    const tokenHash = tokenHashOf(koa);
    let queues: string[] | null = null;
    let input;
    try {
      const body = requireObject(koa.request.body);
      queues = requireQueues(body.queues);
      input = {
        queues,
        capacity: clampInt(body.capacity, 'capacity', 1, 1, 100),
        visibilitySecs: clampInt(body.visibilitySecs, 'visibilitySecs', 30, 1, 86_400),
      };
    } catch (error) {
      if (isBadRequest(error)) {
        const worker = await knownWorker(tokenHash);
        if (queues) refuseDenied(worker, queues);
      }
      throw error;
    }
    const outcome = await leases.lease(tokenHash, input);
    if (!outcome.worker) throw invalidWorker();
    refuseDenied(outcome.worker, input.queues);
    koa.body = { jobs: outcome.jobs };
  });

  router.post('/jobs/complete', async function completeMany(koa) {
    const tokenHash = tokenHashOf(koa);
    let items: CompleteItem[];
    try {
      items = completeItems(requireObject(koa.request.body).items);
    } catch (error) {
      if (isBadRequest(error)) await knownWorker(tokenHash);
      throw error;
    }
    const { worker: known, completed, stale, leaseLatencies } = await statements.complete(tokenHash, items);
    if (!known) throw invalidWorker();
    observe(leaseLatencies);
    koa.body = { completed, stale };
  });

  router.post('/jobs/:id/heartbeat', async function heartbeat(koa) {
    const tokenHash = tokenHashOf(koa);
    // Without visibilitySecs the lease is extended by the length it was leased for.
    const input = await jobCall(koa, tokenHash, (body) => ({
      visibility: body.visibilitySecs == null ? null : clampInt(body.visibilitySecs, 'visibilitySecs', 30, 1, 86_400),
    }));
    const extended = await statements.extend(tokenHash, koa.params.id, input.leaseId, input.visibility);
    if (extended === 'unauthorized') throw invalidWorker();
    if (!extended) throw leaseLost();
    koa.status = 204;
  });

  router.post('/jobs/:id/progress', async function progress(koa) {
    const tokenHash = tokenHashOf(koa);
    const input = await jobCall(koa, tokenHash, (body) => ({ update: progressUpdate(koa.params.id, body) }));
    const extended = await statements.extend(tokenHash, koa.params.id, input.leaseId, null);
    if (extended === 'unauthorized') throw invalidWorker();
    if (!extended) throw leaseLost();
    await publishProgress(extended.tenantId, input.update);
    koa.status = 204;
  });

  router.post('/jobs/:id/complete', async function complete(koa) {
    const tokenHash = tokenHashOf(koa);
    const input = await jobCall(koa, tokenHash, (body) => ({ result: completeResult(body) }));
    const outcome = await combiner.complete(tokenHash, { id: koa.params.id, leaseId: input.leaseId, result: input.result });
    if (!outcome.worker) throw invalidWorker();
    if (!outcome.completed) throw leaseLost();
    if (outcome.leaseLatency) observe([outcome.leaseLatency]);
    koa.status = 204;
  });

  router.post('/jobs/:id/fail', async function fail(koa) {
    const tokenHash = tokenHashOf(koa);
    const input = await jobCall(koa, tokenHash, failInput);
    const outcome = await statements.fail(tokenHash, koa.params.id, input.leaseId, input.error, input.retryable);
    if (outcome === 'unauthorized') throw invalidWorker();
    if (!outcome) throw leaseLost();
    koa.body = outcome;
  });
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
