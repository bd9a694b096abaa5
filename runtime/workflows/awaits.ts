/**
 * Resuming runs that wait for a job: a durable consumer of the change feed
 * (runtime/feed) reads every job's terminal event (`JobSucceeded`,
 * `JobDead`) and, in the same transaction that advances its cursor, enqueues
 * the advance of each step waiting for that job. Exactly once per outcome,
 * across restarts and instances; no polling of the job table.
 */
import type { DurableConsumer } from '../feed/index.ts';
import { enqueueAdvance } from './start.ts';
import { stepsAwaiting } from './store.ts';
import { RUN_STREAM, type EngineDeps } from './types.ts';

const TERMINAL = new Set(['JobSucceeded', 'JobDead']);

export function awaitsConsumer(deps: Pick<EngineDeps, 'jobs' | 'events'>): DurableConsumer {
  return {
    name: 'workflows.awaits',
    streams: ['Job'],
    eventTypes: [...TERMINAL],
    async handle(changes, t) {
      const ended = changes.filter((change) => TERMINAL.has(change.eventType));
      if (ended.length === 0) return;
      const outcome = new Map(ended.map((change) => [change.recordId, change.eventType]));
      for (const waiting of await stepsAwaiting(t, [...outcome.keys()])) {
        const run = { id: waiting.runId, tenantId: waiting.tenantId };
        await enqueueAdvance(t, deps, run, waiting.position, `job:${waiting.jobId}`, 0);
        // A run transition in the log: it wakes the runners of every instance once this commits.
        await deps.events.append(t, {
          streamType: RUN_STREAM, streamId: waiting.runId, eventType: 'WorkflowStepJobEnded',
          data: { position: waiting.position, jobId: waiting.jobId, outcome: outcome.get(waiting.jobId) === 'JobSucceeded' ? 'succeeded' : 'dead' },
          actorId: null, tenantId: waiting.tenantId,
        });
      }
    },
  };
}
