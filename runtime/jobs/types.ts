/**
 * The job queue's public surface: what other capabilities (GraphQL
 * `enqueueJob`, actions, workflows) call through `ctx.services.jobs`.
 */
import type { ReadScope, TenantScope } from '../tenancy/index.ts';
import type { AuditActor, AuditRequest } from '../audit/index.ts';
import type { Tx } from '../db/index.ts';
import type { CreatedCte } from '../events/index.ts';
import type { Sql } from '../sql/index.ts';
import type { LeasedJob } from './lease.ts';

export const JOB_STATUSES = ['queued', 'leased', 'succeeded', 'dead', 'failed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export interface EnqueueInput {
  readonly queue: string;
  readonly kind: string;
  readonly payload?: unknown;
  readonly idempotencyKey?: string | null;
  readonly maxAttempts?: number | null;
  readonly priority?: number | null;
}

export interface Caller {
  /** The user enqueuing (may subscribe to `job:{id}`); null for the system. */
  readonly actorId: string | null;
  /** The tenant the job is stamped with (already resolved by the caller). */
  readonly tenantId: string | null;
  /** Who the audit entry names; default: the user `actorId`, or the system. */
  readonly actor?: AuditActor;
  /** The HTTP request behind the enqueue, for the audit entry. */
  readonly request?: AuditRequest | null;
}

/** A worker token's identity: what a worker may lease. */
export interface WorkerIdentity {
  readonly id: string;
  readonly queues: readonly string[];
  /** Tenant of the minting admin: the token leases only that tenant's jobs. Null = any. */
  readonly tenantId: string | null;
}

/** A failed attempt: back to the queue after `delaySecs`, or dead. */
export type FailOutcome = { outcome: 'retry'; delaySecs: number } | { outcome: 'dead' };

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

/**
 * A job enqueued once per row of a CTE (see `JobQueue.enqueueCte`). */
export interface RowJob {
  readonly queue: string;
  readonly kind: string;
  readonly idempotencyKey?: string | null;
  readonly maxAttempts?: number | null;
  readonly priority?: number | null;
  /** The payload: a jsonb expression over the source row `row` (an alias). */
  payload(row: Sql): Sql;
  /** A condition over the source row the job needs, or null (every row). */
  where(row: Sql): Sql | null;
}

/** A job leased by the worker that asks, with its current lease. */
export interface HeldJob {
  readonly id: string;
  readonly queue: string;
  readonly kind: string;
  readonly tenantId: string | null;
  readonly payload: unknown;
}

/** What `GET /jobs/{id}` returns. */
export interface JobView {
  readonly id: string;
  readonly queue: string;
  readonly kind: string;
  readonly status: JobStatus;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly result: unknown;
  readonly error: string | null;
}

export interface JobQueue {
  /**
   * Enqueues one job in its own transaction. Throws HttpError 400 on blank
   * queue/kind or bad numbers. A repeated idempotencyKey (same tenant and
   * queue) returns the existing job's id.
   */
  enqueue(input: EnqueueInput, caller: Caller): Promise<{ id: string }>;
  /** Enqueues many jobs in one transaction (one INSERT, one event batch); ids in input order. */
  enqueueMany(inputs: readonly EnqueueInput[], caller: Caller): Promise<Array<{ id: string }>>;
  /**
   * Enqueues in the caller's transaction `t` (one INSERT for all, one event
   * batch, one audit batch): the jobs commit with the caller's change. Reserved
   * queues are allowed: the caller is a capability. `created` is false for a
   * repeated idempotency key (the existing job's id is returned).
   */
  enqueueIn(t: Tx, inputs: readonly EnqueueInput[], caller: Caller, options?: TriggeredOptions): Promise<Array<{ id: string; created: boolean }>>;
  /**
   * CTEs that enqueue `jobs` once per row of the CTE they are given (a
   * record's one-statement create, see records' write triggers), with their
   * events and audit entries. Their names start with `prefix`.
   */
  enqueueCte(jobs: readonly RowJob[], caller: Caller, prefix: string, options?: TriggeredOptions): CreatedCte;
  /**
   * Keeps `queue` for a capability: `enqueue` and `enqueueMany` (POST /jobs,
   * GraphQL enqueueJob) refuse it with 400, so that no user can forge its payloads.
   */
  reserveQueue(queue: string, use: string): void;
  /** The worker a live (not revoked) worker token belongs to, or null. */
  authenticateWorker(token: string): Promise<WorkerIdentity | null>;
  /** Job `id` when `workerId` holds its current, unexpired lease `leaseId`; else null. */
  heldJob(id: string, leaseId: string, workerId: string): Promise<HeldJob | null>;
  /** The job as `GET /jobs/{id}` shows it; null when unknown or outside `scope` (SystemScope.ALL: any scope). */
  get(id: string, scope: ReadScope): Promise<JobView | null>;
  /** Returns expired leases to the queue (or to dead); returns how many it moved. */
  reclaim(): Promise<number>;
  /**
   * Enqueues one job in the caller's transaction, so it commits with the
   * caller's change (or not at all). A repeated idempotency key returns the
   * existing job with `inserted: false`.
   */
  enqueueOne(t: Tx, input: EnqueueInput, caller: Caller, options?: EnqueueInTxOptions): Promise<{ id: string; inserted: boolean }>;
  /** In-process consumers of the runtime's own queues (`svc.*`, see input.ts). */
  readonly internal: InternalQueue;
}

/**
 * The worker plane for the runtime's own queues, in process and without a
 * token: the same SKIP LOCKED lease, lease ids and events as remote workers.
 */
export interface InternalQueue {
  /** Leases eligible jobs of `queue` (any tenant) for `visibilitySecs`. */
  lease(queue: string, capacity: number, visibilitySecs: number, workerId: string): Promise<LeasedJob[]>;
  /** Pushes the lease deadline `visibilitySecs` from now; false when the lease is not current. */
  extend(id: string, leaseId: string, visibilitySecs: number): Promise<boolean>;
  /** Completes the job in `t`, with the caller's effect; false when the lease is not current. */
  completeIn(t: Tx, id: string, leaseId: string, result?: unknown): Promise<boolean>;
  /** Fails the attempt: back to the queue after the backoff, or dead after the last attempt. */
  fail(id: string, leaseId: string, error: string): Promise<FailOutcome | null>;
}

declare module '../core/capability.ts' {
  interface Services {
    jobs: JobQueue;
  }
}
