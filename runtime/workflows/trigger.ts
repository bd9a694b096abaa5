/**
 * Event triggers: a write-trigger (runtime/records/triggers.ts) that starts
 * the runs a record write triggers inside the write's transaction, so the
 * write and its runs commit together or not at all. `restore` counts as
 * updated and `hardDelete` as deleted, as for action bindings. The run's
 * trigger keeps the written rows with `@sensitive` fields redacted unless
 * the workflow names them (sensitive.ts).
 */
import type { Logger } from '../log/index.ts';
import type { EventCondition, Model, WorkflowDef } from '../ir/types.ts';
import type { Caller, WriteTrigger, WrittenRecord } from '../records/index.ts';
import type { ModelInfo } from '../records/model.ts';
import { same } from './render.ts';
import { triggerRedaction, type TriggerRedaction } from './sensitive.ts';
import { startRun } from './start.ts';
import type { RunActor } from './store.ts';
import { MAX_DEPTH, type EngineDeps } from './types.ts';

type EventWorkflow = WorkflowDef & { readonly trigger: Extract<WorkflowDef['trigger'], { kind: 'event' }> };

interface Watching {
  readonly workflow: EventWorkflow;
  readonly redact: TriggerRedaction;
}

/** `when` holds IR field names; written rows are keyed by JSON (input) names (`company` -> `companyId`). */
function inputNames(models: readonly Model[]): Map<string, Map<string, string>> {
  return new Map(models.map((m) => [m.name, new Map(m.fields.map((f) => [f.name, f.inputName]))]));
}

/** `changed`: one of the fields' values differs from the old row; `equals`: each field of the new row equals its literal. */
export function conditionHolds(when: EventCondition | null, write: WrittenRecord, names: ReadonlyMap<string, string>): boolean {
  if (!when) return true;
  const record = (write.record ?? write.old ?? {}) as Record<string, unknown>;
  const old = (write.old ?? {}) as Record<string, unknown>;
  const name = (field: string) => names.get(field) ?? field;
  if (when.changed.length > 0 && !when.changed.some((field) => !same(record[name(field)], old[name(field)]))) return false;
  return Object.entries(when.equals).every(([field, literal]) => same(record[name(field)] ?? null, literal));
}

export function actorOf(caller: Caller): RunActor | null {
  const p = caller.principal;
  return p ? { id: p.userId, role: p.role, tenantId: p.tenantId } : null;
}

export function eventTrigger(
  deps: Pick<EngineDeps, 'jobs' | 'events' | 'audit'>, workflows: readonly WorkflowDef[], infos: ReadonlyMap<string, ModelInfo>, log: Logger,
): WriteTrigger {
  const byEvent = new Map<string, Watching[]>();
  for (const workflow of workflows) {
    if (workflow.trigger.kind !== 'event') continue;
    const key = `${workflow.trigger.model}.${workflow.trigger.event}`;
    const redact = triggerRedaction(workflow, infos.get(workflow.trigger.model)!);
    byEvent.set(key, [...(byEvent.get(key) ?? []), { workflow: workflow as EventWorkflow, redact }]);
  }
  const names = inputNames([...infos.values()].map((info) => info.model));
  return {
    watches: (model, kind) => byEvent.has(`${model}.${kind}`),
    async written(t, caller, writes) {
      const depth = caller.depth ?? 0;
      for (const write of writes) {
        for (const { workflow, redact } of byEvent.get(`${write.model}.${write.kind}`) ?? []) {
          if (!conditionHolds(workflow.trigger.when, write, names.get(write.model) ?? new Map())) continue;
          if (depth >= MAX_DEPTH) {
            log.warn({ workflow: workflow.name, model: write.model, id: write.id, depth }, 'workflow not started: too many automated hops led to this write');
            continue;
          }
          await startRun(t, deps, {
            definition: workflow, tenantId: caller.scope.tenantId, actor: actorOf(caller), depth, request: caller.request ?? null, eventId: write.eventId,
            trigger: { kind: 'event', model: write.model, event: write.kind, eventId: write.eventId, recordId: write.id, record: redact.record(write.record), old: redact.old(write.old) },
          });
        }
      }
    },
  };
}
