/**
 * Who calls a media route, and in which scope (CONTRACT section 8). Users
 * authenticate with a JWT and take their scope from `resolveScope`. POST
 * /media also takes a worker token: the worker acts in its token's tenant, or
 * in the tenant of the job it holds a live lease on (X-Job-Id, X-Lease-Id); a
 * worker naming a tenant itself (X-Tenant-ID) is refused.
 */
import type Koa from 'koa';
import { principalOf, type Authenticator } from '../auth/index.ts';
import type { JobQueue } from '../jobs/index.ts';
import { badRequest, conflict, forbidden, unauthorized } from '../http/errors.ts';
import { resolveScope, TenantScope } from '../tenancy/index.ts';

export interface MediaCaller {
  readonly kind: 'user' | 'worker';
  readonly id: string;
  /** The user's role; null for a worker. */
  readonly role: string | null;
  /** Admin or Manager of the scope: may delete any media of it. */
  readonly manager: boolean;
  readonly scope: TenantScope;
}

export async function userCaller(koa: Koa.Context, auth: Authenticator): Promise<MediaCaller> {
  const principal = await principalOf(koa, auth);
  const scope = resolveScope(principal, koa.get('x-tenant-id'));
  return { kind: 'user', id: principal.userId, role: principal.role, manager: principal.role === 'Admin' || principal.role === 'Manager', scope };
}

/** A user, or (without Authorization) a worker holding an X-Worker-Token. */
export async function uploaderCaller(koa: Koa.Context, auth: Authenticator, jobs: JobQueue): Promise<MediaCaller> {
  const token = koa.get('x-worker-token');
  if (!token || koa.get('authorization')) return userCaller(koa, auth);
  const worker = await jobs.authenticateWorker(token);
  if (!worker) throw unauthorized('invalid or revoked worker token');
  if (koa.get('x-tenant-id')) throw forbidden('a worker may not name a tenant');
  const jobId = koa.get('x-job-id');
  const leaseId = koa.get('x-lease-id');
  if (!jobId && !leaseId) return { kind: 'worker', id: worker.id, role: null, manager: false, scope: TenantScope.of(worker.tenantId) };
  if (!jobId || !leaseId) throw badRequest('X-Job-Id and X-Lease-Id go together');
  const job = await jobs.heldJob(jobId, leaseId, worker.id);
  if (!job) throw conflict('lease lost');
  return { kind: 'worker', id: worker.id, role: null, manager: false, scope: TenantScope.of(job.tenantId) };
}
