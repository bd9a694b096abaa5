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
import type { CreatedCte, EventStore, NamedCte, NewEvent } from '../events/index.ts';
import { SYSTEM_ACTOR, type AuditEntryInput, type AuditLog } from '../audit/index.ts';
import { normalizeJob, type NormalizedJob } from './input.ts';
import type { Caller, EnqueueInput, RowJob } from './types.ts';

// Monotonic within the process, so jobs enqueued in one millisecond keep their order.
export const jobId = (): string => newMonotonicId();

const INSERT = `
  insert into svc_jobs (id, queue, kind, payload, idempotency_key, max_attempts, priority, tenant_id, created_by)
  select v.id, v.queue, v.kind, v.payload::jsonb, v.key, v.max_attempts, v.priority, $8, $9
    from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[])
      as v(id, queue, kind, payload, key, max_attempts, priority)
  on conflict (coalesce(tenant_id, ''), queue, idempotency_key) where idempotency_key is not null do nothing
  returning id`;

const EXISTING = `
  select queue, idempotency_key as key, id from svc_jobs
   where coalesce(tenant_id, '') = coalesce($1, '') and (queue, idempotency_key) in (
     select * from unnest($2::text[], $3::text[]))`;

const INSERT_ONE = `
  insert into svc_jobs (id, queue, kind, payload, idempotency_key, max_attempts, priority, tenant_id, created_by)
  values ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9)
  on conflict (coalesce(tenant_id, ''), queue, idempotency_key) where idempotency_key is not null do nothing
  returning id`;

/** The event log and the audit log, which every enqueue writes to. */
export interface EnqueueLogs {
  readonly events: EventStore;
  readonly audit: AuditLog;
  /** Run the one-job statement as a named prepared statement (not behind a transaction pooler). */
  readonly prepared?: boolean;
}

/**
 * Names of the one-job statement's texts (one per audit policy and history
 * setting of a service, so a handful): prepared once per pooled connection.
 */
const statementNames = new Map<string, string>();

function nameOf(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = statementName('svc_jobs_enqueue', text);
    statementNames.set(text, name);
  }
  return name;
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
  const [event] = enqueuedEvents([job], [id], new Set([id]), caller);
  const row = { text: INSERT_ONE, values: [id, job.queue, job.kind, JSON.stringify(job.payload), job.idempotencyKey,
    job.maxAttempts, job.priority, caller.tenantId, caller.actorId] };
  const audited = logs.audit.createdCte(enqueuedEntry(event, job, caller));
  const query = logs.events.withCreatedEvent(row, event, audited ? [audited] : []);
  if (!query) return (await db.tx((t) => resolveInTx(t, logs, [job], [id], caller)))[0];
  const inserted = await anyRows<{ id: string }>(db, logs.prepared ? { name: nameOf(query.text), ...query } : query);
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
export function enqueueCte(
  logs: EnqueueLogs, rowJobs: readonly RowJob[], caller: Caller, prefix: string, options: TriggeredOptions = {},
): CreatedCte {
  const planned = rowJobs.map((rowJob) => {
    const job = normalizeJob({ ...rowJob, payload: null });
    const id = jobId();
    const [event] = enqueuedEvents([job], [id], new Set([id]), caller);
    return { rowJob, job, id, event: event as NewEvent & { eventId: string } };
  });
  return (source, p) => planned.flatMap(({ rowJob, job, id, event }, n): NamedCte[] => {
    const name = `${prefix}_${n}`;
    const where = rowJob.where('c', p);
    const insert = `insert into svc_jobs (id, queue, kind, payload, idempotency_key, max_attempts, priority, tenant_id, created_by)
      select ${p.add(id, 'text')}, ${p.add(job.queue, 'text')}, ${p.add(job.kind, 'text')}, ${rowJob.payload('c', p)},
             ${p.add(job.idempotencyKey, 'text')}, ${p.add(job.maxAttempts, 'int')}, ${p.add(job.priority, 'int')},
             ${p.add(caller.tenantId, 'text')}, ${p.add(caller.actorId, 'text')}
        from ${source} c${where ? ` where ${where}` : ''}
      on conflict (coalesce(tenant_id, ''), queue, idempotency_key) where idempotency_key is not null do nothing
      returning id`;
    const appended = logs.events.firstEventCte(event);
    const audited = options.audit === false ? null : logs.audit.createdCte(enqueuedEntry(event, job, caller));
    return [
      { name, body: insert },
      ...(appended ? [{ name: `${name}_event`, body: appended(name, p) as string }] : []),
      ...(audited ? [{ name: `${name}_audit`, body: audited(name, p) }] : []),
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
  return t.manyOrNone<{ id: string }>(INSERT, [
    ids,
    jobs.map((j) => j.queue),
    jobs.map((j) => j.kind),
    jobs.map((j) => JSON.stringify(j.payload)),
    jobs.map((j) => j.idempotencyKey),
    jobs.map((j) => j.maxAttempts),
    jobs.map((j) => j.priority),
    caller.tenantId,
    caller.actorId,
  ]);
}

function enqueuedEvents(
  jobs: readonly NormalizedJob[], ids: string[], inserted: Set<string>, caller: Caller,
): NewEvent[] {
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
  const rows = await t.manyOrNone<{ queue: string; key: string; id: string }>(EXISTING, [
    caller.tenantId, repeats.map((j) => j.queue), repeats.map((j) => j.idempotencyKey),
  ]);
  const existing = new Map(rows.map((row) => [`${row.queue}\u0000${row.key}`, row.id]));
  return jobs.map((job, i) => {
    if (inserted.has(ids[i])) return { id: ids[i] };
    const id = existing.get(`${job.queue}\u0000${job.idempotencyKey}`);
    if (!id) throw new Error('idempotent enqueue: existing job not found');
    return { id };
  });
}

/**
 * Jobs a capability enqueues as the consequence of a change it audits
 * itself (an action bound to a model write: the write's own `record.*`
 * entry is the trail): `audit: false` writes no `job.enqueue` entry.
 */
export interface TriggeredOptions {
  readonly audit?: boolean;
}

/** How the runtime's own enqueues differ from a client's. */
export interface EnqueueInTxOptions {
  /** Seconds before the job becomes eligible (a visibility time: nothing waits for it). Default 0. */
  readonly delaySecs?: number;
  /** A reserved queue (`svc.*`): allowed, and not audited as `job.enqueue` (the capability audits its own action). */
  readonly internal?: boolean;
}

const INSERT_IN_TX = `
  insert into svc_jobs (id, queue, kind, payload, idempotency_key, max_attempts, priority, tenant_id, created_by, visible_at)
  values ($1, $2, $3, $4::jsonb, $5, $6, $7, $8, $9, now() + make_interval(secs => $10))
  on conflict (coalesce(tenant_id, ''), queue, idempotency_key) where idempotency_key is not null do nothing
  returning id`;

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
  const row = await t.oneOrNone<{ id: string }>(INSERT_IN_TX, [id, job.queue, job.kind, JSON.stringify(job.payload),
    job.idempotencyKey, job.maxAttempts, job.priority, caller.tenantId, caller.actorId, Math.max(0, options.delaySecs ?? 0)]);
  if (!row) return { ...(await resolveRepeats(t, [job], [id], new Set(), caller))[0], inserted: false };
  const [event] = enqueuedEvents([job], [id], new Set([id]), caller);
  await logs.events.append(t, event);
  if (!options.internal) await logs.audit.record(t, enqueuedEntry(event, job, caller));
  return { id, inserted: true };
}
