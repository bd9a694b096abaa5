/**
 * `POST /api/actions/{name}` (CONTRACT section 11): a signed-in user calls an
 * action directly. 401 without a valid token, 404 for an unknown action, 403
 * when its `access` refuses the caller (audited as `action.invoke` denied),
 * 400 naming the field for bad input; otherwise the job is enqueued in the
 * caller's tenant together with its `action.invoke` entry and the answer is
 * 202 `{jobId, status}`. With `wait` (seconds, 0..30) the outcome is awaited
 * on the change feed (the job's JobSucceeded / JobDead event), never by
 * polling the database: 200 when the job ended in time, else 202.
 */
import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import type Koa from 'koa';
import { principalOf, type Authenticator, type Principal } from '../auth/index.ts';
import type { AuditLog } from '../audit/index.ts';
import { tenantOfRequest, userActor } from '../audit/index.ts';
import { afterCommit, type Db } from '../db/index.ts';
import type { EventStore } from '../events/index.ts';
import type { ChangeFeed } from '../feed/index.ts';
import { invalidField, notFound, SafeError } from '../http/errors.ts';
import type { ActionDef } from '../ir/types.ts';
import type { JobQueue, JobView } from '../jobs/index.ts';
import { allows } from '../records/index.ts';
import { isPlainObject } from '../records/values.ts';
import { requestScope, type TenantScope } from '../tenancy/index.ts';
import { checkInput, type InputContext } from './input.ts';
import { ACTIONS_QUEUE, jobCallerOf, type ActionPayload } from './payload.ts';

export const MAX_WAIT_SECS = 30;
const MAX_KEY_LENGTH = 200;
const ENDED = new Set(['JobSucceeded', 'JobDead']);

export interface InvokeDeps {
  readonly db: Db;
  readonly actions: ReadonlyMap<string, ActionDef>;
  readonly input: InputContext;
  readonly auth: Authenticator;
  readonly jobs: JobQueue;
  readonly feed: ChangeFeed;
  readonly audit: AuditLog;
  readonly events: EventStore;
}

interface Call {
  readonly input: Record<string, unknown>;
  readonly idempotencyKey: string | null;
  readonly wait: number;
}

function readCall(action: ActionDef, body: unknown, ctx: InputContext): Call {
  if (!isPlainObject(body)) throw invalidField('body', 'the body must be a JSON object {input, idempotencyKey?, wait?}');
  const extra = Object.keys(body).find((key) => !['input', 'idempotencyKey', 'wait'].includes(key));
  if (extra !== undefined) throw invalidField(extra, `${extra} is not a field of an action call (input, idempotencyKey, wait)`);
  const { idempotencyKey = null, wait = 0 } = body;
  if (idempotencyKey !== null && (typeof idempotencyKey !== 'string' || idempotencyKey === '' || idempotencyKey.length > MAX_KEY_LENGTH)) {
    throw invalidField('idempotencyKey', `idempotencyKey must be a string of 1 to ${MAX_KEY_LENGTH} characters`);
  }
  if (typeof wait !== 'number' || !Number.isFinite(wait) || wait < 0 || wait > MAX_WAIT_SECS) {
    throw invalidField('wait', `wait must be a number of seconds from 0 to ${MAX_WAIT_SECS}`);
  }
  return { input: checkInput(action, body.input, ctx), idempotencyKey: idempotencyKey as string | null, wait };
}

/** The stored key: the caller's key, scoped to the caller and the action, bounded in length. */
function scopedKey(principal: Principal, action: string, key: string | null): string | null {
  if (key === null) return null;
  return `direct:${createHash('sha256').update(`${principal.userId}\u0000${action}\u0000${key}`).digest('base64url')}`;
}

export function mountInvokeRoute(router: Router, deps: InvokeDeps): void {
  router.post('/api/actions/:name', async function invokeAction(koa) {
    const principal = await principalOf(koa, deps.auth);
    const action = deps.actions.get(koa.params.name);
    if (!action) throw notFound(`no action named ${koa.params.name}`);
    if (!allows(action.access, principal)) await refuse(koa, deps.audit, principal, action);
    const scope = requestScope(koa, principal);
    const call = readCall(action, koa.request.body, deps.input);
    // Subscribed before the enqueue commits: the job's end cannot slip between the two.
    let watched = '';
    const watch = call.wait > 0
      ? deps.feed.subscribe({
        streams: ['Job'], eventTypes: [...ENDED],
        accepts: (c) => c.modelName === 'Job' && ENDED.has(c.eventType) && c.recordId === watched, maxQueued: 16,
      })
      : null;
    try {
      const job = await enqueue(koa, deps, principal, scope, action, call);
      watched = job.id;
      if (watch) answer(koa, job.id, await outcome(deps.jobs, job.id, scope, watch, call.wait), true);
      else answer(koa, job.id, job.created ? null : await deps.jobs.get(job.id, scope), false);
    } finally {
      watch?.close();
    }
  });
}

async function refuse(koa: Koa.Context, audit: AuditLog, principal: Principal, action: ActionDef): Promise<never> {
  await audit.denied({
    action: 'action.invoke', tenantId: tenantOfRequest(koa), actor: userActor(principal),
    changes: { action: action.name, trigger: 'direct' }, request: audit.requestOf(koa),
  });
  // A SafeError, not an HttpError: the denied-attempts middleware would file a second entry.
  throw new SafeError(403, 'FORBIDDEN', `not allowed to invoke ${action.name}`);
}

/** The job and its `action.invoke` entry in one transaction; a repeated key finds the existing job (and writes no entry). */
async function enqueue(
  koa: Koa.Context, deps: InvokeDeps, principal: Principal, scope: TenantScope, action: ActionDef, call: Call,
): Promise<{ id: string; created: boolean }> {
  const caller = { principal, scope, request: deps.audit.requestOf(koa) };
  const payload: ActionPayload = {
    action: action.name, trigger: 'direct', model: null, event: null, eventId: null, recordId: null,
    tenantId: scope.tenantId, input: call.input, old: null,
    actor: { id: principal.userId, role: principal.role, tenantId: scope.tenantId }, depth: 0,
  };
  return deps.db.tx('svc-action-invoke', async (t) => {
    afterCommit(t, () => deps.events.committed());
    const [queued] = await deps.jobs.enqueueIn(t, [{
      queue: ACTIONS_QUEUE, kind: action.name, payload, idempotencyKey: scopedKey(principal, action.name, call.idempotencyKey),
    }], jobCallerOf(caller));
    if (queued.created) {
      await deps.audit.record(t, {
        action: 'action.invoke', tenantId: scope.tenantId, actor: userActor(principal), entityType: 'Job', entityId: queued.id,
        changes: { action: action.name, trigger: 'direct' }, request: caller.request,
      });
    }
    return queued;
  });
}

/** The job once it ended, or as it stands when `seconds` pass first. */
async function outcome(
  jobs: JobQueue, jobId: string, scope: TenantScope, watch: AsyncIterator<unknown>, seconds: number,
): Promise<JobView | null> {
  const now = await jobs.get(jobId, scope);
  if (!now || now.status === 'succeeded' || now.status === 'dead') return now;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, seconds * 1000)));
  try {
    await Promise.race([watch.next(), timeout]);
  } finally {
    clearTimeout(timer);
  }
  return jobs.get(jobId, scope);
}

/** 200 with the outcome when the caller waited and the job ended; else 202 with its status. */
function answer(koa: Koa.Context, jobId: string, view: JobView | null, waited: boolean): void {
  if (waited && view?.status === 'succeeded') {
    koa.status = 200;
    koa.body = { jobId, status: 'succeeded', result: view.result ?? null };
  } else if (waited && view?.status === 'dead') {
    koa.status = 200;
    koa.body = { jobId, status: 'dead', error: view.error };
  } else {
    koa.status = 202;
    koa.body = { jobId, status: view?.status ?? 'queued' };
  }
}
