/**
 * What a lease holder may do: extend (heartbeat, progress), complete, fail.
 * Every statement matches on the current leaseId, so a stale or lost lease
 * changes nothing and the caller answers 409.
 */
import type { Db, Tx } from '../db/index.ts';
import type { EventStore } from '../events/index.ts';
import { retryJitter } from './backoff.ts';
import { leasedAtMs } from './lease.ts';

export interface CompleteItem {
  readonly id: string;
  readonly leaseId: string;
  readonly result: unknown;
}

/** How long a completed job was leased for (the database's clock at both ends). */
export interface LeaseLatency {
  readonly queue: string;
  readonly seconds: number;
}

interface CompletedRow {
  id: string;
  tenant_id: string | null;
  attempts: number;
  queue: string;
  lease_id: string;
  now_ms: number;
}

export type FailOutcome = { outcome: 'retry'; delaySecs: number } | { outcome: 'dead' };

const EXTEND = `
  update svc_jobs
     set lease_secs = coalesce($3, lease_secs), visible_at = now() + make_interval(secs => coalesce($3, lease_secs)),
         updated_at = now()
   where id = $1 and lease_id = $2 and status = 'leased'
  returning tenant_id`;

/** Heartbeat and progress: push the deadline out; null when the lease is not current. */
export async function extendLease(
  db: Db, id: string, leaseId: string, visibilitySecs: number | null,
): Promise<{ tenantId: string | null } | null> {
  const row = await db.oneOrNone<{ tenant_id: string | null }>(EXTEND, [id, leaseId, visibilitySecs]);
  return row ? { tenantId: row.tenant_id } : null;
}

/** Is `leaseId` the current lease of job `id`? Checked before a call's other fields (CONTRACT section 14). */
export async function leaseHeld(db: Db, id: string, leaseId: string): Promise<boolean> {
  const row = await db.oneOrNone(`select 1 from svc_jobs where id = $1 and lease_id = $2 and status = 'leased'`, [id, leaseId]);
  return row !== null;
}

const COMPLETE = `
  update svc_jobs j
     set status = 'succeeded', result = v.result::jsonb, error = null, lease_id = null, worker_id = null,
         visible_at = now(), updated_at = now()
    from unnest($1::text[], $2::text[], $3::text[]) as v(id, lease_id, result)
   where j.id = v.id and j.lease_id = v.lease_id and j.status = 'leased'
  returning j.id, j.tenant_id, j.attempts, j.queue, v.lease_id, (extract(epoch from clock_timestamp()) * 1000)::float8 as now_ms`;

/** Completes a batch in one transaction; items whose lease is not current are reported stale. */
export async function completeJobs(
  db: Db, events: EventStore, items: readonly CompleteItem[],
): Promise<{ completed: string[]; stale: string[]; leaseLatencies: LeaseLatency[] }> {
  // Rows are locked in id order, so two overlapping batches cannot deadlock.
  const sorted = [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const rows = await db.tx('svc-jobs-complete', async (t) => {
    const done = await t.manyOrNone<CompletedRow>(COMPLETE, [
      sorted.map((item) => item.id),
      sorted.map((item) => item.leaseId),
      sorted.map((item) => (item.result === undefined ? null : JSON.stringify(item.result))),
    ]);
    await events.appendMany(t, done.map((row) => ({
      streamType: 'Job', streamId: row.id, eventType: 'JobSucceeded',
      data: { attempts: row.attempts }, actorId: null, tenantId: row.tenant_id,
    })));
    return done;
  });
  if (rows.length > 0) events.committed();
  const completed = new Set(rows.map((row) => row.id));
  return {
    completed: items.filter((item) => completed.has(item.id)).map((item) => item.id),
    stale: items.filter((item) => !completed.has(item.id)).map((item) => item.id),
    leaseLatencies: rows.flatMap((row) => {
      const leasedAt = leasedAtMs(row.lease_id);
      return leasedAt === null ? [] : [{ queue: row.queue, seconds: (row.now_ms - leasedAt) / 1000 }];
    }),
  };
}

/**
 * Completes one job in the caller's transaction `t` (its effect commits with
 * the acknowledgement, or neither does); false when the lease is not current.
 */
export async function completeInTx(t: Tx, events: EventStore, id: string, leaseId: string, result: unknown): Promise<boolean> {
  const [row] = await t.manyOrNone<CompletedRow>(COMPLETE, [[id], [leaseId], [result === undefined ? null : JSON.stringify(result)]]);
  if (!row) return false;
  await events.append(t, {
    streamType: 'Job', streamId: id, eventType: 'JobSucceeded', data: { attempts: row.attempts }, actorId: null, tenantId: row.tenant_id,
  });
  return true;
}

// $5 is the jitter factor in [0.5, 1): the delay is computed once, in SQL, from the row's attempts.
const FAIL = `
  update svc_jobs
     set status = case when $3 and attempts < max_attempts then 'queued' else 'dead' end,
         visible_at = case when $3 and attempts < max_attempts
           then now() + make_interval(secs => greatest(1, floor(least(3600, power(2, attempts)) * $5))::int)
           else now() end,
         error = $4, lease_id = null, worker_id = null, updated_at = now()
   where id = $1 and lease_id = $2 and status = 'leased'
  returning status, attempts, tenant_id,
            greatest(1, floor(least(3600, power(2, attempts)) * $5))::int as delay_secs`;

interface FailRow {
  status: 'queued' | 'dead';
  attempts: number;
  tenant_id: string | null;
  delay_secs: number;
}

/** Fails the current attempt: retry with backoff, or dead. Null when the lease is not current. */
export async function failJob(
  db: Db, events: EventStore, id: string, leaseId: string, error: string, retryable: boolean,
): Promise<FailOutcome | null> {
  const outcome = await db.tx('svc-jobs-fail', async (t) => {
    const row = await t.oneOrNone<FailRow>(FAIL, [id, leaseId, retryable, error, retryJitter()]);
    if (!row) return null;
    const retry = row.status === 'queued';
    await events.append(t, {
      streamType: 'Job', streamId: id, eventType: retry ? 'JobRetryScheduled' : 'JobDead',
      data: retry ? { attempts: row.attempts, error, delaySecs: row.delay_secs } : { attempts: row.attempts, error },
      actorId: null, tenantId: row.tenant_id,
    });
    return retry ? { outcome: 'retry' as const, delaySecs: row.delay_secs } : { outcome: 'dead' as const };
  });
  if (outcome) events.committed();
  return outcome;
}
