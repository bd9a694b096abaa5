/**
 * The jobs admin routes of CONTRACT section 16 (Admin only, audited): search,
 * inspect, retry, cancel, and the same by filter (`POST /jobs/bulk`, with
 * `dryRun` answering how many jobs it would change). Every statement is in
 * the caller's tenant scope (section 8). See ../control.ts.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import { principalOf, requireRole, type Authenticator, type Principal } from '../../auth/index.ts';
import { userActor, type AuditLog } from '../../audit/index.ts';
import type { Db } from '../../db/index.ts';
import type { EventStore } from '../../events/index.ts';
import { conflict, invalidField, notFound } from '../../http/errors.ts';
import type { TenantScope } from '../../tenancy/index.ts';
import {
  ACTION_STATUSES, applyAction, BULK_BATCH, countMatched, inspectJob, parseFilter, parsePayloadParam, searchJobs, statusOf,
  type ControlAction, type JobFilter,
} from '../control.ts';
import { requireObject } from '../input.ts';
import { readScope } from '../scope.ts';

export interface ControlDeps {
  readonly auth: Authenticator;
  readonly db: Db;
  readonly events: EventStore;
  readonly audit: AuditLog;
}

const ACTIONS: readonly ControlAction[] = ['retry', 'cancel'];

export function mountControlRoutes(router: Router, deps: ControlDeps): void {
  const { auth, db } = deps;
  const admin = requireRole(auth, ['Admin']);

  router.get('/jobs/search', admin, async (koa) => {
    const q = (name: string) => [koa.query[name]].flat()[0];
    const filter = parseFilter({ queue: q('queue'), status: q('status'), kind: q('kind'), payload: parsePayloadParam(q('payload')) });
    koa.body = await searchJobs(db, readScope(await principalOf(koa, auth), koa), { filter, after: q('after'), limit: q('limit') });
  });

  router.post('/jobs/bulk', admin, async (koa) => {
    const principal = await principalOf(koa, auth);
    const body = requireObject(koa.request.body);
    const action = body.action as ControlAction;
    if (!ACTIONS.includes(action)) throw invalidField('action', `action must be one of ${ACTIONS.join(', ')}`);
    if (body.dryRun !== undefined && typeof body.dryRun !== 'boolean') throw invalidField('dryRun', 'dryRun must be a boolean');
    const filter = parseFilter(body.filter);
    const scope = readScope(principal, koa);
    if (body.dryRun === true) {
      koa.body = { matched: await countMatched(db, scope, filter, action) };
      return;
    }
    koa.body = { changed: await bulk(deps, koa, principal, scope, filter, action) };
  });

  for (const action of ACTIONS) {
    router.post(`/jobs/:id/${action}`, admin, async (koa) => {
      const principal = await principalOf(koa, auth);
      const scope = readScope(principal, koa);
      const id = koa.params.id;
      const changed = await db.tx(`svc-jobs-${action}`, async (t) => {
        const [job] = await applyAction(t, deps.events, scope, action, { id }, principal.userId);
        if (job) {
          await deps.audit.record(t, {
            action: `job.${action}`, tenantId: job.tenant_id, actor: userActor(principal), entityType: 'Job', entityId: job.id,
            changes: { status: [action === 'retry' ? 'dead' : 'queued', job.status] }, request: deps.audit.requestOf(koa),
          });
        }
        return job;
      });
      if (!changed) await refuse(db, scope, id, action);
      koa.body = await inspectJob(db, scope, id);
    });
  }

  // Fixed segments first: `/jobs/:id` (the app plane) would shadow nothing here, `inspect` is its own path.
  router.get('/jobs/:id/inspect', admin, async (koa) => {
    const job = await inspectJob(db, readScope(await principalOf(koa, auth), koa), koa.params.id);
    if (!job) throw notFound('job not found');
    koa.body = job;
  });
}

/** 404 when the job is not in the caller's scope, 409 when its status does not allow `action`. */
async function refuse(db: Db, scope: TenantScope, id: string, action: ControlAction): Promise<never> {
  const status = await statusOf(db, scope, id);
  if (status === null) throw notFound('job not found');
  throw conflict(`job is ${status}: ${action} applies to ${ACTION_STATUSES[action].join(' or ')} jobs`);
}

/** Batches of BULK_BATCH jobs, a transaction and an audit entry each, until none matches. */
async function bulk(
  deps: ControlDeps, koa: Koa.Context, principal: Principal, scope: TenantScope, filter: JobFilter,
  action: ControlAction,
): Promise<number> {
  let total = 0;
  for (;;) {
    const changed = await deps.db.tx(`svc-jobs-bulk-${action}`, async (t) => {
      const jobs = await applyAction(t, deps.events, scope, action, { filter }, principal.userId);
      if (jobs.length > 0) {
        await deps.audit.record(t, {
          action: `job.${action}`, tenantId: scope.tenantId, actor: userActor(principal), entityType: 'Job', entityId: null,
          changes: { filter, jobIds: jobs.map((job) => job.id) }, request: deps.audit.requestOf(koa),
        });
      }
      return jobs.length;
    });
    total += changed;
    if (changed < BULK_BATCH) return total;
  }
}
