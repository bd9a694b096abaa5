/**
 * The `enqueueJob` mutation: a thin call into the jobs capability, which
 * owns validation (blank queue/kind is its HttpError 400 -> VALIDATION_ERROR).
 */
import { RecordError, type Caller } from '../records/index.ts';

export interface EnqueueInput {
  readonly queue: string;
  readonly kind: string;
  readonly payload?: unknown;
  readonly idempotencyKey?: string | null;
  readonly maxAttempts?: number | null;
  readonly priority?: number | null;
}

/** The part of `ctx.services.jobs` this mutation needs. */
export interface JobQueueLike {
  enqueue(input: EnqueueInput, by: { actorId: string | null; tenantId: string | null }): Promise<{ id: string }>;
}

export async function enqueueJob(jobs: JobQueueLike | undefined, caller: Caller, args: Record<string, any>) {
  if (!caller.principal) throw new RecordError('UNAUTHORIZED', 'authentication required');
  if (!jobs) throw new Error('the job queue is not available in this service');
  // Absent optional arguments stay absent: the queue applies its own defaults.
  const input = Object.fromEntries(
    ['queue', 'kind', 'payload', 'idempotencyKey', 'maxAttempts', 'priority']
      .filter((key) => args[key] !== undefined && args[key] !== null)
      .map((key) => [key, args[key]]),
  ) as unknown as EnqueueInput;
  const { id } = await jobs.enqueue(input, { actorId: caller.principal.userId, tenantId: caller.tenantId });
  return { id };
}
