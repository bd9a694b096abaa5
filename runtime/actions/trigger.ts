/**
 * Enqueue on write: the write trigger (runtime/records/triggers.ts) that turns
 * a model write matching a binding into a job on queue `actions`, in the
 * write's own transaction or statement, with idempotency key
 * `{eventId}:{action}`. A create without hooks stays one statement (the job
 * rides in it as CTEs); every other write enqueues with one INSERT for all of
 * its rows (updateMany included).
 *
 * A write the automation depth rule refuses (runtime/automation/depth.ts,
 * the same rule as workflows') enqueues nothing: each binding it matched is
 * audited as `action.invoke` denied with `action_depth_exceeded`, in the same
 * transaction.
 */
import { depthOf, type AutomationDepth } from '../automation/index.ts';
import type { JobQueue, RowJob } from '../jobs/index.ts';
import { sql } from '../sql/index.ts';
import type { Caller, PlannedCreate, WriteTrigger, WrittenRecord } from '../records/index.ts';
import { bindingKey, type BindingTable, type CompiledBinding } from './bindings.ts';
import { ACTIONS_QUEUE, actorOf, jobCallerOf, type ActionPayload } from './payload.ts';

export interface TriggerDeps {
  readonly bindings: BindingTable;
  readonly jobs: JobQueue;
  readonly depth: AutomationDepth;
}

const keyOf = (eventId: string, action: string) => `${eventId}:${action}`;

/** Everything of the payload but `input`, which comes from the written row. */
function basePayload(b: CompiledBinding, caller: Caller, write: Pick<WrittenRecord, 'eventId' | 'id' | 'old'>): Omit<ActionPayload, 'input'> {
  return {
    action: b.action.name, trigger: 'event', model: b.binding.model, event: b.binding.event, eventId: write.eventId,
    recordId: write.id, tenantId: caller.scope.tenantId, old: b.redact(write.old), actor: actorOf(caller), depth: depthOf(caller),
  };
}

export function actionTrigger(deps: TriggerDeps): WriteTrigger {
  const bindingsOf = (model: string, kind: WrittenRecord['kind']) => deps.bindings.get(bindingKey(model, kind)) ?? [];
  return {
    watches: (model, kind) => bindingsOf(model, kind).length > 0,

    createdCtes(caller: Caller, create: PlannedCreate) {
      // Too deep: the transactional path records each matched binding.
      if (!deps.depth.allows(caller)) return null;
      const rowJobs = bindingsOf(create.model, 'created').map((b): RowJob => {
        const base = basePayload(b, caller, { eventId: create.eventId, id: create.id, old: null });
        return {
          queue: ACTIONS_QUEUE, kind: b.action.name, idempotencyKey: keyOf(create.eventId, b.action.name),
          payload: (row) => sql`(${sql.value(JSON.stringify(base), 'jsonb')} || jsonb_build_object('input', ${b.input(row)}))`,
          where: (row) => b.where(row),
        };
      });
      // The write's own record.* entry is the audit trail of its jobs (no job.enqueue entry each).
      return [deps.jobs.enqueueCte(rowJobs, jobCallerOf(caller), 'action_job', { audit: false })];
    },

    async written(t, caller, writes) {
      const matched = writes.flatMap((write) => bindingsOf(write.model, write.kind)
        .filter((b) => b.matches(write))
        .map((b) => ({ write, b })));
      if (matched.length === 0) return;
      if (!deps.depth.allows(caller)) {
        await deps.depth.refused(t, caller, matched.map(({ write, b }) => ({ kind: 'action', name: b.action.name, write })));
        return;
      }
      await deps.jobs.enqueueIn(t, matched.map(({ write, b }) => ({
        queue: ACTIONS_QUEUE, kind: b.action.name, idempotencyKey: keyOf(write.eventId, b.action.name),
        payload: { ...basePayload(b, caller, write), input: b.inputOf(write.record ?? write.old) } satisfies ActionPayload,
      })), jobCallerOf(caller), { audit: false });
    },
  };
}
