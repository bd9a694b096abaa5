/**
 * Enqueue: one multi-row INSERT (idempotent through ON CONFLICT on the
 * idempotency index) plus the JobEnqueued events, in one transaction; a single
 * job in one statement.
 *
 * Concurrent repeats of a key are safe: the second INSERT waits on the first's
 * unique-index entry, then skips; the follow-up SELECT (a new snapshot under
 * READ COMMITTED) sees the committed winner.
 */
import { monotonicFactory } from 'ulid';
import type { Db, Tx } from '../db/index.ts';
import type { EventStore, NewEvent } from '../events/index.ts';
import { normalizeJob, type NormalizedJob } from './input.ts';
import type { Caller, EnqueueInput } from './types.ts';

// Monotonic within the process, so jobs enqueued in one millisecond keep their order.
export const jobId = monotonicFactory();

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

export async function enqueueJobs(
  db: Db, events: EventStore, inputs: readonly EnqueueInput[], caller: Caller,
): Promise<Array<{ id: string }>> {
  const jobs = inputs.map(normalizeJob);
  if (jobs.length === 0) return [];
  const ids = jobs.map(() => jobId());
  if (jobs.length === 1) return [await enqueueOne(db, events, jobs[0], ids[0], caller)];
  return db.tx('svc-jobs-enqueue', (t) => resolveInTx(t, events, jobs, ids, caller));
}

/**
 * One job: row, JobEnqueued event and change notice in one autocommit
 * statement (one round trip). A repeated idempotency key inserts nothing; the
 * existing id is then read by a second statement, whose fresh snapshot sees a
 * concurrent winner that committed while the first one waited on it.
 */
async function enqueueOne(db: Db, events: EventStore, job: NormalizedJob, id: string, caller: Caller): Promise<{ id: string }> {
  const [event] = enqueuedEvents([job], [id], new Set([id]), caller);
  const row = { text: INSERT_ONE, values: [id, job.queue, job.kind, JSON.stringify(job.payload), job.idempotencyKey,
    job.maxAttempts, job.priority, caller.tenantId, caller.actorId] };
  const query = events.withCreatedEvent(row, event);
  if (!query) return (await db.tx((t) => resolveInTx(t, events, [job], [id], caller)))[0];
  const inserted = await db.any<{ id: string }>(query);
  if (inserted.length > 0) return { id };
  return (await resolveRepeats(db, [job], [id], new Set(), caller))[0];
}

async function resolveInTx(t: Tx, events: EventStore, jobs: readonly NormalizedJob[], ids: string[], caller: Caller) {
  const inserted = new Set((await insertRows(t, jobs, ids, caller)).map((row) => row.id));
  await events.appendMany(t, enqueuedEvents(jobs, ids, inserted, caller));
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
    streamType: 'Job', streamId: ids[i], eventType: 'JobEnqueued',
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
