/**
 * The operator's hand on jobs (CONTRACT section 16): search by queue, status,
 * kind and payload; retry a failed or dead job; cancel a queued one; the same
 * for every job a filter matches, counted first (`dryRun`).
 *
 * Cancel writes no new status: a cancelled job is `dead` with the error
 * `cancelled` (the status check, /jobs/stats and every worker already know
 * `dead`), and so it can be retried like any other dead job. Its event is the
 * one every dead job has, `JobDead` (data `{attempts, error: 'cancelled',
 * cancelledBy}`, actor the operator): what waits for a job's end (a workflow
 * step awaiting it, an action invoked synchronously) reads `JobSucceeded` and
 * `JobDead` only, and a cancel must end those waits as a death would. A retry
 * gives the job its full `maxAttempts` again and appends `JobRetried`; a
 * waiter that already saw the job dead has moved on and is not resumed.
 *
 * Bulk changes walk the matched jobs in batches of BATCH rows, one transaction
 * each (rows locked `skip locked`, so a worker's lease never waits on them),
 * with one audit entry per batch naming the filter and the jobs it changed.
 */
import type { Db, Tx } from '../db/index.ts';
import { afterCommit, isoUtcSql } from '../db/index.ts';
import type { EventStore } from '../events/index.ts';
import { invalidField } from '../http/errors.ts';
import { newId } from '../ids.ts';
import { compile, sql, type Sql } from '../sql/index.ts';
import type { TenantScope } from '../tenancy/index.ts';
import { clampInt } from './input.ts';
import { JOB_STATUSES, type JobStatus } from './types.ts';

export interface JobFilter {
  readonly queue?: string;
  readonly status?: JobStatus;
  readonly kind?: string;
  /** Matched by containment (`payload @> filter.payload`): `{customer: {id: 42}}`. */
  readonly payload?: Record<string, unknown>;
}

export type ControlAction = 'retry' | 'cancel';

/** The statuses each action applies to: anything else is left as it is. */
export const ACTION_STATUSES: Readonly<Record<ControlAction, readonly JobStatus[]>> = {
  retry: ['dead', 'failed'],
  cancel: ['queued'],
};

const BATCH = 1000;
const MAX_NAME = 200;

/** `body` (a bulk request's `filter`, or a search's query parameters already parsed) as a filter; 400 naming the field. */
export function parseFilter(input: unknown, field = 'filter'): JobFilter {
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input)) throw invalidField(field, `${field} must be an object`);
  const raw = input as Record<string, unknown>;
  const known = new Set(['queue', 'status', 'kind', 'payload']);
  for (const key of Object.keys(raw)) if (!known.has(key)) throw invalidField(`${field}.${key}`, `unknown filter ${key}`);
  const name = (key: 'queue' | 'kind') => {
    const value = raw[key];
    if (value === undefined || value === null || value === '') return undefined;
    if (typeof value !== 'string' || value.length > MAX_NAME) throw invalidField(key, `${key} must be a string of at most ${MAX_NAME} characters`);
    return value;
  };
  const status = raw.status === undefined || raw.status === null || raw.status === '' ? undefined : raw.status;
  if (status !== undefined && !JOB_STATUSES.includes(status as JobStatus)) {
    throw invalidField('status', `status must be one of ${JOB_STATUSES.join(', ')}`);
  }
  const payload = raw.payload === undefined || raw.payload === null || raw.payload === '' ? undefined : raw.payload;
  if (payload !== undefined && (typeof payload !== 'object' || Array.isArray(payload))) {
    throw invalidField('payload', 'payload must be a JSON object (matched by containment)');
  }
  return { queue: name('queue'), kind: name('kind'), status: status as JobStatus | undefined, payload: payload as Record<string, unknown> | undefined };
}

/** The search's `payload` query parameter: JSON object text. */
export function parsePayloadParam(value: string | undefined): Record<string, unknown> | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    return JSON.parse(value) as Record<string, unknown>;
  } catch {
    throw invalidField('payload', 'payload must be a JSON object (matched by containment)');
  }
}

function matches(filter: JobFilter, scope: TenantScope, statuses?: readonly JobStatus[]): Sql {
  const parts: Sql[] = [scope.localPredicate(null)];
  if (filter.queue !== undefined) parts.push(sql`queue = ${sql.value(filter.queue, 'text')}`);
  if (filter.kind !== undefined) parts.push(sql`kind = ${sql.value(filter.kind, 'text')}`);
  if (filter.status !== undefined) parts.push(sql`status = ${sql.value(filter.status, 'text')}`);
  if (statuses !== undefined) parts.push(sql`status = any(${sql.value(statuses, 'text[]')})`);
  if (filter.payload !== undefined) parts.push(sql`payload @> ${sql.value(JSON.stringify(filter.payload), 'jsonb')}`);
  return sql.join(parts, ' and ');
}

const CREATED_AT = sql.raw(isoUtcSql('created_at'));
const UPDATED_AT = sql.raw(isoUtcSql('updated_at'));
const VISIBLE_AT = sql.raw(isoUtcSql('visible_at'));

const COLUMNS = sql`id, queue, kind, status, attempts, max_attempts, priority, payload, result, error, created_by,
  ${CREATED_AT} as created_at, ${UPDATED_AT} as updated_at, ${VISIBLE_AT} as visible_at`;

export interface JobRow {
  id: string; queue: string; kind: string; status: JobStatus; attempts: number; max_attempts: number; priority: number;
  payload: unknown; result: unknown; error: string | null; created_by: string | null; created_at: string; updated_at: string;
  visible_at: string;
}

export function jobOut(row: JobRow) {
  return {
    id: row.id, queue: row.queue, kind: row.kind, status: row.status, attempts: row.attempts, maxAttempts: row.max_attempts,
    priority: row.priority, payload: row.payload, result: row.result, error: row.error, createdBy: row.created_by,
    createdAt: row.created_at, updatedAt: row.updated_at, visibleAt: row.visible_at,
  };
}

export interface SearchQuery {
  readonly filter: JobFilter;
  readonly after?: string;
  readonly limit?: unknown;
}

/** Newest first, a keyset page on the id (ULID order): the cost of a page does not grow with its position. */
export async function searchJobs(db: Db, scope: TenantScope, query: SearchQuery) {
  const limit = clampInt(query.limit === undefined || query.limit === '' ? undefined : Number(query.limit), 'limit', 50, 1, 200);
  const after = query.after ? sql` and id < ${sql.value(query.after, 'text')}` : sql.empty;
  const rows = await db.manyOrNone<JobRow>(compile(sql`
    select ${COLUMNS} from svc_jobs where ${matches(query.filter, scope)}${after}
     order by id desc limit ${sql.value(limit + 1, 'int')}`, { scope }));
  const page = rows.slice(0, limit);
  return { jobs: page.map(jobOut), nextCursor: rows.length > limit ? page[page.length - 1].id : null };
}

export async function inspectJob(db: Db, scope: TenantScope, id: string) {
  const row = await db.oneOrNone<JobRow>(compile(sql`
    select ${COLUMNS} from svc_jobs where id = ${sql.value(id, 'text')} and ${scope.localPredicate(null)}`, { scope }));
  return row ? jobOut(row) : null;
}

export async function countMatched(db: Db, scope: TenantScope, filter: JobFilter, action: ControlAction): Promise<number> {
  const row = await db.one<{ n: number }>(compile(sql`
    select count(*)::int as n from svc_jobs where ${matches(filter, scope, ACTION_STATUSES[action])}`, { scope }));
  return row.n;
}

const SET: Readonly<Record<ControlAction, Sql>> = {
  retry: sql`status = 'queued', attempts = 0, visible_at = now(), lease_id = null, worker_id = null, updated_at = now()`,
  cancel: sql`status = 'dead', error = 'cancelled', visible_at = now(), lease_id = null, worker_id = null, updated_at = now()`,
};

/** The event each change appends: a cancel is the job's death (`JobDead`, as the worker plane writes it, plus who cancelled). */
const EVENT: Readonly<Record<ControlAction, (job: Changed, actorId: string) => { eventType: string; data: Record<string, unknown> }>> = {
  retry: (_job, actorId) => ({ eventType: 'JobRetried', data: { by: actorId } }),
  cancel: (job, actorId) => ({ eventType: 'JobDead', data: { attempts: job.attempts, error: 'cancelled', cancelledBy: actorId } }),
};

interface Changed { id: string; tenant_id: string | null; status: JobStatus; attempts: number }

/**
 * Applies `action` in `t` to at most BATCH jobs matching `filter` (or the one
 * job `id`), appending each job's event; returns the jobs changed.
 */
export async function applyAction(
  t: Tx, events: EventStore, scope: TenantScope, action: ControlAction, target: { filter: JobFilter } | { id: string },
  actorId: string,
): Promise<Changed[]> {
  const where = 'id' in target
    ? sql`id = ${sql.value(target.id, 'text')} and ${matches({}, scope, ACTION_STATUSES[action])}`
    : matches(target.filter, scope, ACTION_STATUSES[action]);
  const changed = await t.manyOrNone<Changed>(compile(sql`
    with picked as (
      select id from svc_jobs where ${where} order by id limit ${sql.value(BATCH, 'int')} for update skip locked
    )
    update svc_jobs set ${SET[action]} where id in (select id from picked) returning id, tenant_id, status, attempts`, { scope }));
  if (changed.length > 0) afterCommit(t, () => events.committed());
  await events.appendMany(t, changed.map((job) => ({
    streamType: 'Job', streamId: job.id, ...EVENT[action](job, actorId), actorId, tenantId: job.tenant_id, eventId: newId(),
  })));
  return changed;
}

/** Why `id` was not changed: absent from the scope (null), or its status. */
export async function statusOf(db: Db, scope: TenantScope, id: string): Promise<JobStatus | null> {
  const row = await db.oneOrNone<{ status: JobStatus }>(compile(sql`
    select status from svc_jobs where id = ${sql.value(id, 'text')} and ${scope.localPredicate(null)}`, { scope }));
  return row?.status ?? null;
}

export const BULK_BATCH = BATCH;
