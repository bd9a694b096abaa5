/**
 * Write-back (CONTRACT section 11): a worker holding the lease of an action's
 * job calls `POST /graphql` with `X-Worker-Token`, `X-Job-Id` and
 * `X-Lease-Id`. It acts as the actor stamped on the job, in the job's tenant,
 * whatever the request says: a worker naming a tenant (X-Tenant-ID) is 403,
 * one sending a user's token as well is 400. The lease is checked before
 * anything else of the request: a stale or foreign lease is 409, code
 * FORBIDDEN (see `leaseNotHeld`). The writes carry the job's depth + 1, so
 * that action loops stop at SVC_ACTION_MAX_DEPTH.
 *
 * Refusals are answered here in the GraphQL response shape
 * (`{errors:[{message, extensions:{code}}]}`, HTTP status as for REST).
 */
import type Koa from 'koa';
import type { Principal } from '../auth/index.ts';
import { workerActor, ANONYMOUS_ACTOR, type AuditLog } from '../audit/index.ts';
import { badRequest, forbidden, SafeError, unauthorized } from '../http/errors.ts';
import type { JobQueue } from '../jobs/index.ts';
import type { Caller } from '../records/index.ts';
import { TenantScope } from '../tenancy/index.ts';
import { ACTIONS_QUEUE, storedActor } from './payload.ts';

/**
 * Resolves a worker's GraphQL request to its caller; a refusal is a SafeError
 * (401 token, 400 headers, 409 lease, 403 tenant), already audited when denied.
 */
export type WorkerCaller = (koa: Koa.Context) => Promise<Caller>;

export interface WriteBackDeps {
  readonly jobs: JobQueue;
  readonly audit: AuditLog;
}

export function workerCaller(deps: WriteBackDeps): WorkerCaller {
  return async function workerGraphqlCaller(koa) {
    let workerId: string | null = null;
    try {
      return await resolve(koa, deps, (id) => (workerId = id));
    } catch (error) {
      if (!(error instanceof SafeError)) throw error;
      if (error.status === 401 || error.status === 403) {
        await deps.audit.denied({
          action: 'access.denied', tenantId: null, actor: workerId ? workerActor(workerId) : ANONYMOUS_ACTOR,
          changes: { method: koa.method, path: koa.path, status: error.status, jobId: koa.get('x-job-id') || null },
          request: deps.audit.requestOf(koa),
        });
      }
      throw error;
    }
  };
}

/**
 * HTTP 409 as CONTRACT section 11 says, with a code of GraphQL's five
 * (section 4): the token is valid, but without the job's current lease the
 * worker may not act as the job's actor, so FORBIDDEN (not UNAUTHORIZED,
 * which would send it to re-authenticate, nor VALIDATION_ERROR: nothing in
 * the request is malformed; not audited as a denial, as before).
 */
const leaseNotHeld = () =>
  new SafeError(409, 'FORBIDDEN', 'lease lost: the lease is not current, or not this worker\'s; a worker writes back only while it holds the job\'s lease');

async function resolve(koa: Koa.Context, deps: WriteBackDeps, identified: (workerId: string) => void): Promise<Caller> {
  const worker = await deps.jobs.authenticateWorker(koa.get('x-worker-token'));
  if (!worker) throw unauthorized('invalid or revoked worker token');
  identified(worker.id);
  const jobId = koa.get('x-job-id');
  const leaseId = koa.get('x-lease-id');
  if (!jobId || !leaseId) throw badRequest('a worker write-back needs X-Job-Id and X-Lease-Id');
  const job = await deps.jobs.heldJob(jobId, leaseId, worker.id);
  if (!job) throw leaseNotHeld();
  if (koa.get('authorization')) throw badRequest('a worker write-back sends X-Worker-Token, not Authorization');
  if (koa.get('x-tenant-id')) throw forbidden('a worker acts in its job\'s tenant and may not name one');
  if (job.queue !== ACTIONS_QUEUE) throw forbidden(`only a job of queue ${ACTIONS_QUEUE} may write back`);
  const stamped = storedActor(job.payload);
  if (!stamped) throw forbidden('the job names no user to act as');
  const principal: Principal = {
    userId: stamped.actor.id, role: stamped.actor.role, tenantId: job.tenantId, sessionId: null, email: null,
  };
  koa.state.principal = principal; // a FORBIDDEN operation is then filed under the actor
  return { principal, scope: TenantScope.of(job.tenantId), request: deps.audit.requestOf(koa), depth: stamped.depth + 1 };
}
