/**
 * Event triggers: a write-trigger (runtime/records/triggers.ts) that starts
 * the runs a record write triggers inside the write's transaction, so the
 * write and its runs commit together or not at all. `restore` counts as
 * updated and `hardDelete` as deleted, as for action bindings. The run's
 * trigger keeps the written rows with `@sensitive` fields redacted unless
 * the workflow names them (sensitive.ts).
 *
 * `when` and the depth limit are the rules action bindings follow
 * (runtime/automation): a write deeper than SVC_ACTION_MAX_DEPTH starts no
 * run, and each run it would have started is audited as `workflow.run`
 * denied with `action_depth_exceeded`, in the write's transaction.
 */
import { compileCondition, depthOf, type Attempt, type AutomationDepth, type Condition } from '../automation/index.ts';
import type { WorkflowDef } from '../ir/types.ts';
import type { Caller, WriteTrigger } from '../records/index.ts';
import type { ModelInfo } from '../records/model.ts';
import { triggerRedaction, type TriggerRedaction } from './sensitive.ts';
import { startRun } from './start.ts';
import type { RunActor } from './store.ts';
import type { EngineDeps } from './types.ts';

type EventWorkflow = WorkflowDef & { readonly trigger: Extract<WorkflowDef['trigger'], { kind: 'event' }> };

interface Watching {
  readonly workflow: EventWorkflow;
  readonly redact: TriggerRedaction;
  readonly when: Condition;
}

export function actorOf(caller: Caller): RunActor | null {
  const p = caller.principal;
  return p ? { id: p.userId, role: p.role, tenantId: p.tenantId } : null;
}

export function eventTrigger(
  deps: Pick<EngineDeps, 'jobs' | 'events' | 'audit'>, workflows: readonly WorkflowDef[], infos: ReadonlyMap<string, ModelInfo>,
  automationDepth: AutomationDepth,
): WriteTrigger {
  const byEvent = new Map<string, Watching[]>();
  for (const workflow of workflows) {
    if (workflow.trigger.kind !== 'event') continue;
    const key = `${workflow.trigger.model}.${workflow.trigger.event}`;
    const info = infos.get(workflow.trigger.model)!;
    const watching = { workflow: workflow as EventWorkflow, redact: triggerRedaction(workflow, info), when: compileCondition(info, workflow.trigger.when) };
    byEvent.set(key, [...(byEvent.get(key) ?? []), watching]);
  }
  return {
    watches: (model, kind) => byEvent.has(`${model}.${kind}`),
    async written(t, caller, writes) {
      const depth = depthOf(caller);
      const refused: Attempt[] = [];
      for (const write of writes) {
        for (const { workflow, redact, when } of byEvent.get(`${write.model}.${write.kind}`) ?? []) {
          if (!when.matches(write)) continue;
          if (!automationDepth.allows(caller)) {
            refused.push({ kind: 'workflow', name: workflow.name, write });
            continue;
          }
          await startRun(t, deps, {
            definition: workflow, tenantId: caller.scope.tenantId, actor: actorOf(caller), depth, request: caller.request ?? null, eventId: write.eventId,
            trigger: { kind: 'event', model: write.model, event: write.kind, eventId: write.eventId, recordId: write.id, record: redact.record(write.record), old: redact.old(write.old) },
          });
        }
      }
      await automationDepth.refused(t, caller, refused);
    },
  };
}
