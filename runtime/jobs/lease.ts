/**
 * Leasing: one statement picks eligible jobs with FOR UPDATE SKIP LOCKED and
 * leases them, so concurrent workers (on any instance) never get the same job;
 * the batch's JobLeased events go in the same transaction.
 */
import type { Db } from '../db/index.ts';
import type { EventStore } from '../events/index.ts';

export interface LeaseRequest {
  readonly queues: readonly string[];
  readonly capacity: number;
  readonly visibilitySecs: number;
  readonly workerId: string;
  /** A tenant-bound worker token leases only its tenant's jobs; null = any tenant. */
  readonly tenantId: string | null;
}

export interface LeasedJob {
  readonly id: string;
  readonly queue: string;
  readonly kind: string;
  readonly payload: unknown;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly leaseId: string;
}

/** A leased job's row as the lease statements return it. */
export interface LeasedRow {
  id: string;
  queue: string;
  kind: string;
  payload: unknown;
  attempts: number;
  max_attempts: number;
  lease_id: string;
  priority: number;
  tenant_id: string | null;
}

// Per queue, a lateral index scan in (priority desc, id) order; `queue = any($1)` would
// instead sort every queued row of the queues on each lease.
/**
 * A lease id is a UUIDv7: its first 48 bits are the lease time (Unix ms, the
 * database's clock), so any instance completing the job can measure
 * lease-to-complete latency (see leasedAtMs) without another column.
 */
export const LEASE_ID = `encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
  placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3) from 1 for 6),
  52, 1), 53, 1), 'hex')::uuid::text`;

/** The lease time (Unix ms) carried by a lease id; null for an id of another shape. */
export function leasedAtMs(leaseId: string): number | null {
  const hex = leaseId.replaceAll('-', '');
  if (!/^[0-9a-f]{12}7/.test(hex)) return null;
  return Number.parseInt(hex.slice(0, 12), 16);
}

function leaseSql(tenantScoped: boolean): string {
  return `
  with picked as (
    select c.id from unnest($1::text[]) as q(name)
    cross join lateral (
      select id, priority from svc_jobs
       where status = 'queued' and queue = q.name and visible_at <= now()
         ${tenantScoped ? 'and tenant_id = $5' : ''}
       order by priority desc, id
       limit $2
       for update skip locked
    ) c
    order by c.priority desc, c.id
    limit $2
  )
  update svc_jobs j
     set status = 'leased', attempts = j.attempts + 1, lease_id = ${LEASE_ID},
         lease_secs = $3, visible_at = now() + make_interval(secs => $3), worker_id = $4, updated_at = now()
   where j.id = any(array(select id from picked))
  returning j.id, j.queue, j.kind, j.payload, j.attempts, j.max_attempts, j.lease_id, j.priority, j.tenant_id`;
}

const SQL = { any: leaseSql(false), tenant: leaseSql(true) };

export async function leaseJobs(db: Db, events: EventStore, request: LeaseRequest): Promise<LeasedJob[]> {
  const params = [request.queues, request.capacity, request.visibilitySecs, request.workerId, request.tenantId];
  const rows = await db.tx('svc-jobs-lease', async (t) => {
    const leased = await t.manyOrNone<LeasedRow>(request.tenantId === null ? SQL.any : SQL.tenant, params);
    await events.appendMany(t, leased.map((row) => ({
      streamType: 'Job', streamId: row.id, eventType: 'JobLeased',
      data: { workerId: request.workerId, attempt: row.attempts },
      actorId: null, tenantId: row.tenant_id,
    })));
    return leased;
  });
  if (rows.length > 0) events.committed();
  // UPDATE ... RETURNING has no order: restore the lease order for the worker.
  rows.sort((a, b) => b.priority - a.priority || (a.id < b.id ? -1 : 1));
  return rows.map((row) => ({
    id: row.id, queue: row.queue, kind: row.kind, payload: row.payload,
    attempts: row.attempts, maxAttempts: row.max_attempts, leaseId: row.lease_id,
  }));
}
