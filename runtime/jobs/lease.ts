/**
 * Leased jobs and lease ids. The statement that leases is the worker plane's
 * (plane.ts): it picks eligible jobs with FOR UPDATE SKIP LOCKED and leases
 * them, so concurrent workers (on any instance) never get the same job.
 */

export interface LeasedJob {
  readonly id: string;
  readonly queue: string;
  readonly kind: string;
  readonly payload: unknown;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly leaseId: string;
}

/** A leased job's row as the lease statement returns it. */
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
