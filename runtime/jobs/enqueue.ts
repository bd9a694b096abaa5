/**
 * Enqueue: one multi-row INSERT (idempotent through ON CONFLICT on the
 * idempotency index) plus the JobEnqueued events, in one transaction; a single
 * job in one statement.
 *
 * Concurrent repeats of a key are safe: the second INSERT waits on the first's
 * unique-index entry, then skips; the follow-up SELECT (a new snapshot under
 * READ COMMITTED) sees the committed winner.
 */
import { newId, newMonotonicId } from '../ids.ts';
import { anyRows, statementName, type Db, type Tx } from '../db/index.ts';
import { CREATED, type CreatedCte, type EventStore, type NamedCte, type NewEvent } from '../events/index.ts';
import { SYSTEM_ACTOR, type AuditEntryInput, type AuditLog } from '../audit/index.ts';
import { sql } from '../sql/index.ts';
import { normalizeJob, type NormalizedJob } from './input.ts';
import { prepare, type Prepared } from '../sql/prepare.ts';
import type { Caller, EnqueueInTxOptions, EnqueueInput, RowJob, TriggeredOptions } from './types.ts';

export type { EnqueueInTxOptions, TriggeredOptions } from './types.ts';

// Monotonic within the process, so jobs enqueued in one millisecond keep their order.
export const jobId = (): string => newMonotonicId();

const COLUMNS = sql`id, queue, kind, payload, idempotency_key, max_attempts, priority, tenant_id, created_by`;
/** A repeated idempotency key (same tenant and queue) inserts nothing. */
const ON_CONFLICT = sql`on conflict (coalesce(tenant_id, ''), queue, idempotency_key) where idempotency_key is not null do nothing`;

/** Every job of a batch: one array per column, unnest'ed. */
const INSERT = prepare<{
  ids: string[]; queues: string[]; kinds: string[]; payloads: string[]; keys: (string | null)[];
  maxAttempts: number[]; priorities: number[]; tenantId: string | null; actorId: string | null;
}>((arg) => sql`
  insert into svc_jobs (${COLUMNS})
  select v.id, v.queue, v.kind, v.payload::jsonb, v.key, v.max_attempts, v.priority, ${arg('tenantId', 'text')}, ${arg('actorId', 'text')}
    from unnest(${arg('ids', 'text[]')}, ${arg('queues', 'text[]')}, ${arg('kinds', 'text[]')}, ${arg('payloads', 'text[]')},
                ${arg('keys', 'text[]')}, ${arg('maxAttempts', 'int[]')}, ${arg('priorities', 'int[]')})
      as v(id, queue, kind, payload, key, max_attempts, priority)
  ${ON_CONFLICT}
  returning id`);

const EXISTING = prepare<{ tenantId: string | null; queues: string[]; keys: (string | null)[] }>((arg) => sql`
  select queue, idempotency_key as key, id from svc_jobs
   where coalesce(tenant_id, '') = coalesce(${arg('tenantId', 'text')}, '') and (queue, idempotency_key) in (
     select * from unnest(${arg('queues', 'text[]')}, ${arg('keys', 'text[]')}))`);

/** The event log and the audit log, which every enqueue writes to. */
export interface EnqueueLogs {
  readonly events: EventStore;
  readonly audit: AuditLog;
  /** Run the one-job statement as a named prepared statement (not behind a transaction pooler). */
  readonly prepared?: boolean;
}

/** A one-job statement's values by name (its audit entry's columns are `audit0`..`audit12`). */
type OneJobArgs = Record<string, unknown>;

interface OneJobStatement {
  readonly name: string;
  readonly statement: Prepared<OneJobArgs>;
}

/**
 * The one-job statement (row, JobEnqueued event and audit entry, one round
 * trip) of a pair of logs, built and compiled once: its text depends only on
 * the history policy, the cursor mode and the audit policy, so a request
 * computes only its values (measured: building and compiling the text per
 * request was ~30 µs of a POST /jobs, docs/performance.md). Null when the
 * history policy drops Job events: those go through a transaction.
 * Prepared once per pooled connection under its name.
 */
const oneJobStatements = new WeakMap<EventStore, WeakMap<AuditLog, OneJobStatement | null>>();

function oneJobStatement(logs: EnqueueLogs): OneJobStatement | null {
  let byAudit = oneJobStatements.get(logs.events);
  if (!byAudit) {
    byAudit = new WeakMap();
    oneJobStatements.set(logs.events, byAudit);
  }
  let built = byAudit.get(logs.audit);
  if (built === undefined) {
    built = buildOneJob(logs);
    byAudit.set(logs.audit, built);
  }
  return built;
}

function buildOneJob(logs: EnqueueLogs): OneJobStatement | null {
  let appends = true;
  const statement = prepare<OneJobArgs>((arg) => {
    const appended = logs.events.firstEventFrom('Job', CREATED, {
      id: arg('eventId', 'text'), streamType: sql`'Job'`, streamId: arg('id', 'text'), eventType: sql`'JobEnqueued'`,
      data: arg('eventData', 'jsonb'), actorId: arg('actorId', 'text'), tenantId: arg('tenantId', 'text'),
    });
    if (!appended) appends = false;
    const audited = logs.audit.entryFromSlots(CREATED, (column, cast) => arg(`audit${column}`, cast));
    return sql`with ${CREATED} as (
      insert into svc_jobs (${COLUMNS})
      values (${sql.join([
        arg('id', 'text'), arg('queue', 'text'), arg('kind', 'text'), arg('payload', 'jsonb'), arg('key', 'text'),
        arg('maxAttempts', 'int'), arg('priority', 'int'), arg('tenantId', 'text'), arg('actorId', 'text'),
      ], ', ')})
      ${ON_CONFLICT}
      returning id)${appended ? sql`, appended as (${appended})` : sql.empty}${
      audited ? sql`, audited as (${audited})` : sql.empty} select ${CREATED}.* from ${CREATED}`;
  });
  return appends ? { name: statementName('svc_jobs_enqueue', statement.text), statement } : null;
}

/** The values of the one-job statement for one job. */
function oneJobArgs(logs: EnqueueLogs, job: NormalizedJob, id: string, event: NewEvent & { readonly eventId: string }, caller: Caller): OneJobArgs {
  const args: OneJobArgs = {
    id, queue: job.queue, kind: job.kind, payload: JSON.stringify(job.payload), key: job.idempotencyKey,
    maxAttempts: job.maxAttempts, priority: job.priority, tenantId: caller.tenantId, actorId: caller.actorId,
    eventId: event.eventId, eventData: JSON.stringify(event.data),
  };
  const audit = logs.audit.entryValues(enqueuedEntry(event, job, caller));
  for (let i = 0; i < audit.length; i++) args[`audit${i}`] = audit[i];
  return args;
}

export async function enqueueJobs(
  db: Db, logs: EnqueueLogs, inputs: readonly EnqueueInput[], caller: Caller,
): Promise<Array<{ id: string }>> {
  const jobs = inputs.map((input) => normalizeJob(input));
  if (jobs.length === 0) return [];
  const ids = jobs.map(() => jobId());
  const result = jobs.length === 1
    ? [await enqueueOne(db, logs, jobs[0], ids[0], caller)]
    : await db.tx('svc-jobs-enqueue', (t) => resolveInTx(t, logs, jobs, ids, caller));
  logs.events.committed();
  return result;
}

/** The `job.enqueue` entry of a job that was inserted (a repeated idempotency key writes none). */
function enqueuedEntry(event: NewEvent, job: NormalizedJob, caller: Caller): AuditEntryInput {
  return {
    action: 'job.enqueue', tenantId: caller.tenantId,
    actor: caller.actor ?? (caller.actorId ? { kind: 'user', id: caller.actorId, role: null } : SYSTEM_ACTOR),
    entityType: 'Job', entityId: event.streamId, eventId: event.eventId,
    changes: { queue: job.queue, kind: job.kind, priority: job.priority, maxAttempts: job.maxAttempts },
    request: caller.request ?? null,
  };
}

/**
 * One job: row and JobEnqueued event in one autocommit
 * statement (one round trip). A repeated idempotency key inserts nothing; the
 * existing id is then read by a second statement, whose fresh snapshot sees a
 * concurrent winner that committed while the first one waited on it.
 */
async function enqueueOne(db: Db, logs: EnqueueLogs, job: NormalizedJob, id: string, caller: Caller): Promise<{ id: string }> {
  const one = oneJobStatement(logs);
  if (!one) return (await db.tx((t) => resolveInTx(t, logs, [job], [id], caller)))[0];
  const [event] = enqueuedEvents([job], [id], new Set([id]), caller);
  const { text } = one.statement;
  const values = one.statement.values(oneJobArgs(logs, job, id, event, caller));
  const inserted = await anyRows<{ id: string }>(db, logs.prepared ? { name: one.name, text, values } : { text, values });
  if (inserted.length > 0) return { id };
  return (await resolveRepeats(db, [job], [id], new Set(), caller))[0];
}

/**
 * Enqueues in the caller's transaction (the jobs commit with the caller's
 * change or not at all): one INSERT for every job, one event batch, one audit
 * batch. `created` is false for a repeated idempotency key.
 */
export async function enqueueInTx(
  t: Tx, logs: EnqueueLogs, inputs: readonly EnqueueInput[], caller: Caller, options: TriggeredOptions = {},
): Promise<Array<{ id: string; created: boolean }>> {
  const jobs = inputs.map((input) => normalizeJob(input));
  if (jobs.length === 0) return [];
  const ids = jobs.map(() => jobId());
  const resolved = await resolveInTx(t, logs, jobs, ids, caller, options.audit !== false);
  return resolved.map(({ id }, i) => ({ id, created: id === ids[i] }));
}

/**
 * Folds jobs into a statement that creates a row in a CTE (a record create):
 * each job is inserted once per row of that CTE that its `where` accepts, its
 * JobEnqueued event and audit entry once per inserted job. The CTEs are named
 * `${prefix}_<n>...`; `prefix` must be unique in the statement.
 */
/** The alias of the source row a RowJob's payload and condition are written over. */
const SOURCE_ROW = sql.alias('c');

export function enqueueCte(
  logs: EnqueueLogs, rowJobs: readonly RowJob[], caller: Caller, prefix: string, options: TriggeredOptions = {},
): CreatedCte {
  const planned = rowJobs.map((rowJob) => {
    const job = normalizeJob({ ...rowJob, payload: null });
    const id = jobId();
    const [event] = enqueuedEvents([job], [id], new Set([id]), caller);
    return { rowJob, job, id, event };
  });
  return (source) => planned.flatMap(({ rowJob, job, id, event }, n): NamedCte[] => {
    const name = sql.alias(`${prefix}_${n}`);
    const payload = rowJob.payload(SOURCE_ROW);
    const where = rowJob.where(SOURCE_ROW);
    const insert = sql`insert into svc_jobs (${COLUMNS})
      select ${sql.join([
        sql.value(id, 'text'), sql.value(job.queue, 'text'), sql.value(job.kind, 'text'), payload,
        sql.value(job.idempotencyKey, 'text'), sql.value(job.maxAttempts, 'int'), sql.value(job.priority, 'int'),
        sql.value(caller.tenantId, 'text'), sql.value(caller.actorId, 'text'),
      ], ', ')}
        from ${source} c${where ? sql` where ${where}` : sql.empty}
      ${ON_CONFLICT}
      returning id`;
    const appended = logs.events.firstEvent(event, name);
    const audited = options.audit === false ? null : logs.audit.entryFrom(enqueuedEntry(event, job, caller), name);
    return [
      { name, body: insert },
      ...(appended ? [{ name: sql.alias(`${prefix}_${n}_event`), body: appended }] : []),
      ...(audited ? [{ name: sql.alias(`${prefix}_${n}_audit`), body: audited }] : []),
    ];
  });
}

async function resolveInTx(t: Tx, logs: EnqueueLogs, jobs: readonly NormalizedJob[], ids: string[], caller: Caller, audit = true) {
  const inserted = new Set((await insertRows(t, jobs, ids, caller)).map((row) => row.id));
  const events = enqueuedEvents(jobs, ids, inserted, caller);
  await logs.events.appendMany(t, events);
  const byId = new Map(jobs.map((job, i) => [ids[i], job]));
  if (audit) await logs.audit.record(t, events.map((event) => enqueuedEntry(event, byId.get(event.streamId)!, caller)));
  if (inserted.size === jobs.length) return ids.map((id) => ({ id }));
  return resolveRepeats(t, jobs, ids, inserted, caller);
}

function insertRows(t: Tx, jobs: readonly NormalizedJob[], ids: string[], caller: Caller) {
  return t.manyOrNone<{ id: string }>(INSERT.text, INSERT.values({
    ids,
    queues: jobs.map((j) => j.queue),
    kinds: jobs.map((j) => j.kind),
    payloads: jobs.map((j) => JSON.stringify(j.payload)),
    keys: jobs.map((j) => j.idempotencyKey),
    maxAttempts: jobs.map((j) => j.maxAttempts),
    priorities: jobs.map((j) => j.priority),
    tenantId: caller.tenantId,
    actorId: caller.actorId,
  }));
}

function enqueuedEvents(
  jobs: readonly NormalizedJob[], ids: string[], inserted: Set<string>, caller: Caller,
): Array<NewEvent & { readonly eventId: string }> {
  return jobs.flatMap((job, i) => (inserted.has(ids[i]) ? [{
    streamType: 'Job', streamId: ids[i], eventType: 'JobEnqueued', eventId: newId(),
    data: { queue: job.queue, kind: job.kind, priority: job.priority, maxAttempts: job.maxAttempts },
    actorId: caller.actorId, tenantId: caller.tenantId,
  }] : []));
}

/** Replaces the ids of skipped rows (repeated keys) with the existing jobs' ids. */
async function resolveRepeats(
  t: Tx | Db, jobs: readonly NormalizedJob[], ids: string[], inserted: Set<string>, caller: Caller,
): Promise<Array<{ id: string }>> {
  const repeats = jobs.filter((_, i) => !inserted.has(ids[i]));
  const rows = await t.manyOrNone<{ queue: string; key: string; id: string }>(EXISTING.text, EXISTING.values({
    tenantId: caller.tenantId, queues: repeats.map((j) => j.queue), keys: repeats.map((j) => j.idempotencyKey),
  }));
  const existing = new Map(rows.map((row) => [`${row.queue}\u0000${row.key}`, row.id]));
  return jobs.map((job, i) => {
    if (inserted.has(ids[i])) return { id: ids[i] };
    const id = existing.get(`${job.queue}\u0000${job.idempotencyKey}`);
    if (!id) throw new Error('idempotent enqueue: existing job not found');
    return { id };
  });
}

const INSERT_IN_TX = prepare<{
  id: string; queue: string; kind: string; payload: string; key: string | null; maxAttempts: number; priority: number;
  tenantId: string | null; actorId: string | null; delaySecs: number;
}>((arg) => sql`
  insert into svc_jobs (${COLUMNS}, visible_at)
  values (${sql.join([arg('id', 'text'), arg('queue', 'text'), arg('kind', 'text'), arg('payload', 'jsonb'), arg('key', 'text'),
    arg('maxAttempts', 'int'), arg('priority', 'int'), arg('tenantId', 'text'), arg('actorId', 'text')], ', ')},
    now() + make_interval(secs => ${arg('delaySecs', 'double precision')}))
  ${ON_CONFLICT}
  returning id`);

/**
 * One job in the caller's transaction `t`, so that it commits (or not) with
 * the caller's own change: a workflow run created with the write that
 * triggered it, a step's job with its step record. A repeated idempotency
 * key returns the existing job (`inserted: false`) and writes nothing.
 */
export async function enqueueOneInTx(
  t: Tx, logs: EnqueueLogs, input: EnqueueInput, caller: Caller, options: EnqueueInTxOptions = {},
): Promise<{ id: string; inserted: boolean }> {
  const job = normalizeJob(input, options.internal === true);
  const id = jobId();
  const row = await t.oneOrNone<{ id: string }>(INSERT_IN_TX.text, INSERT_IN_TX.values({
    id, queue: job.queue, kind: job.kind, payload: JSON.stringify(job.payload), key: job.idempotencyKey,
    maxAttempts: job.maxAttempts, priority: job.priority, tenantId: caller.tenantId, actorId: caller.actorId,
    delaySecs: Math.max(0, options.delaySecs ?? 0),
  }));
  if (!row) return { ...(await resolveRepeats(t, [job], [id], new Set(), caller))[0], inserted: false };
  const [event] = enqueuedEvents([job], [id], new Set([id]), caller);
  await logs.events.append(t, event);
  if (!options.internal) await logs.audit.record(t, enqueuedEntry(event, job, caller));
  return { id, inserted: true };
}
