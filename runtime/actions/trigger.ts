/**
 * Enqueue on write: the write trigger (runtime/records/triggers.ts) that turns
 * a model write matching a binding into a job on queue `actions`, in the
 * write's own transaction or statement, with idempotency key
 * `{eventId}:{action}`. A create without hooks stays one statement (the job
 * rides in it as CTEs); every other write enqueues with one INSERT for all of
 * its rows (updateMany included).
 *
 * A write more than SVC_ACTION_MAX_DEPTH automated hops deep enqueues nothing:
 * each binding it matched is audited as `action.invoke` denied with
 * `action_depth_exceeded`, in the same transaction.
 */
import type { AuditEntryInput, AuditLog } from '../audit/index.ts';
import type { JobQueue, RowJob } from '../jobs/index.ts';
import type { Logger } from '../log/index.ts';
import type { Caller, PlannedCreate, WriteTrigger, WrittenRecord } from '../records/index.ts';
import { userActor, SYSTEM_ACTOR } from '../audit/index.ts';
import { bindingKey, type BindingTable, type CompiledBinding } from './bindings.ts';
import { ACTIONS_QUEUE, actorOf, depthOf, jobCallerOf, type ActionPayload } from './payload.ts';

export interface TriggerDeps {
  readonly bindings: BindingTable;
  readonly jobs: () => JobQueue;
  readonly audit: AuditLog;
  readonly maxDepth: number;
  readonly log: Logger;
}

export const DEPTH_EXCEEDED = 'action_depth_exceeded';

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
      if (depthOf(caller) > deps.maxDepth) return null;
      const rowJobs = bindingsOf(create.model, 'created').map((b): RowJob => {
        const base = basePayload(b, caller, { eventId: create.eventId, id: create.id, old: null });
        return {
          queue: ACTIONS_QUEUE, kind: b.action.name, idempotencyKey: keyOf(create.eventId, b.action.name),
          payload: (row, p) => `(${p.add(JSON.stringify(base), 'jsonb')} || jsonb_build_object('input', ${b.inputSql(row, p)}))`,
          where: (row, p) => b.whereSql(row, p),
        };
      });
      // The write's own record.* entry is the audit trail of its jobs (no job.enqueue entry each).
      return [deps.jobs().enqueueCte(rowJobs, jobCallerOf(caller), 'action_job', { audit: false })];
    },

    async written(t, caller, writes) {
      const matched = writes.flatMap((write) => bindingsOf(write.model, write.kind)
        .filter((b) => b.matches(write))
        .map((b) => ({ write, b })));
      if (matched.length === 0) return;
      if (depthOf(caller) > deps.maxDepth) {
        deps.log.warn({ depth: depthOf(caller), maxDepth: deps.maxDepth, actions: matched.map(({ b }) => b.action.name) }, 'action not enqueued: depth limit');
        await deps.audit.record(t, matched.map(({ write, b }) => depthExceeded(caller, write, b)));
        return;
      }
      await deps.jobs().enqueueIn(t, matched.map(({ write, b }) => ({
        queue: ACTIONS_QUEUE, kind: b.action.name, idempotencyKey: keyOf(write.eventId, b.action.name),
        payload: { ...basePayload(b, caller, write), input: b.inputOf(write.record ?? write.old) } satisfies ActionPayload,
      })), jobCallerOf(caller), { audit: false });
    },
  };
}

function depthExceeded(caller: Caller, write: WrittenRecord, b: CompiledBinding): AuditEntryInput {
  return {
    action: 'action.invoke', outcome: 'denied', tenantId: caller.scope.tenantId,
    actor: caller.principal ? userActor(caller.principal) : SYSTEM_ACTOR,
    entityType: write.model, entityId: write.id, eventId: write.eventId,
    changes: { action: b.action.name, error: DEPTH_EXCEEDED, depth: depthOf(caller) },
    request: caller.request ?? null,
  };
}
