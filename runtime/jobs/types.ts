/**
 * The job queue's public surface: what other capabilities (GraphQL
 * `enqueueJob`, actions, workflows) call through `ctx.services.jobs`.
 */
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
  /** The job as `GET /jobs/{id}` shows it; null when unknown or outside `tenantId` (undefined = any tenant). */
  get(id: string, tenantId?: string | null): Promise<JobView | null>;
  /** Returns expired leases to the queue (or to dead); returns how many it moved. */
  reclaim(): Promise<number>;
}

declare module '../service/types.ts' {
  interface Services {
    jobs: JobQueue;
  }
}
