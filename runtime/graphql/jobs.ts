/**
 * The `enqueueJob` mutation: a thin call into the jobs capability, which
 * owns validation (blank queue/kind is its HttpError 400 -> VALIDATION_ERROR).
 */
import { RecordError, type Caller } from '../records/index.ts';
import type { EnqueueInput, JobQueue } from '../jobs/index.ts';
import { rejectNul } from '../http/input.ts';
import { userActor } from '../audit/index.ts';

export async function enqueueJob(jobs: JobQueue | undefined, caller: Caller, args: Record<string, any>) {
  if (!caller.principal) throw new RecordError('UNAUTHORIZED', 'authentication required');
  if (!jobs) throw new Error('the job queue is not available in this service');
  rejectNul(args); // inline literals: variables were checked with the request

  // Absent optional arguments stay absent: the queue applies its own defaults.
  const input = Object.fromEntries(
    ['queue', 'kind', 'payload', 'idempotencyKey', 'maxAttempts', 'priority']
      .filter((key) => args[key] !== undefined && args[key] !== null)
      .map((key) => [key, args[key]]),
  ) as unknown as EnqueueInput;
  const { id } = await jobs.enqueue(input, {
    actorId: caller.principal.userId, tenantId: caller.scope.tenantId, actor: userActor(caller.principal), request: caller.request,
  });
  return { id };
}
