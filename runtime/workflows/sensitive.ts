/**
 * The record an event-triggered run stores in its trigger (`trigger.record`,
 * `trigger.old`) shows `@sensitive` fields as "[redacted]", as the audit log
 * does, except the fields a template of the workflow names
 * (`{{trigger.record.ssn}}`, `{{trigger.old.ssn}}`): naming one is how a
 * workflow declares it needs that value. `{{trigger.record}}` names no field.
 */
import { scanTemplates } from '../ir/template.ts';
import type { TemplateValue, WorkflowDef, WorkflowStep } from '../ir/types.ts';
import { automationRedaction, type Row } from '../records/index.ts';
import type { ModelInfo } from '../records/model.ts';

/** Every template-bearing value of a step, by kind: a new kind without an entry fails type-checking. */
const VALUES_OF: { readonly [K in WorkflowStep['kind']]: (step: Extract<WorkflowStep, { kind: K }>) => readonly TemplateValue[] } = {
  job: (step) => [step.payload],
  mutation: (step) => [step.recordId, ...Object.values(step.data)],
  http: (step) => [step.url, ...Object.values(step.headers), step.body],
  delay: () => [],
  set: (step) => Object.values(step.values),
};

function valuesOf(step: WorkflowStep): readonly TemplateValue[] {
  const own = (VALUES_OF[step.kind] as (s: WorkflowStep) => readonly TemplateValue[])(step);
  return step.if ? [...own, ...step.if.args] : own;
}

/** The fields of `trigger.<part>` that the workflow's templates name. */
export function namedTriggerFields(workflow: WorkflowDef, part: 'record' | 'old'): Set<string> {
  const names = new Set<string>();
  const pending: TemplateValue[] = workflow.steps.flatMap(valuesOf);
  while (pending.length > 0) {
    const value = pending.pop()!;
    if (typeof value === 'string') {
      const scan = scanTemplates(value);
      if (!scan.ok) continue;
      for (const { path } of scan.refs) if (path[0] === 'trigger' && path[1] === part && path[2] !== undefined) names.add(path[2]);
    } else if (Array.isArray(value)) {
      pending.push(...value);
    } else if (value !== null && typeof value === 'object') {
      pending.push(...Object.values(value as Record<string, TemplateValue>));
    }
  }
  return names;
}

export interface TriggerRedaction {
  readonly record: (row: Row | null) => Row | null;
  readonly old: (row: Row | null) => Row | null;
}

/** How a run of `workflow` stores the written rows of the model `info` it is triggered by. */
export function triggerRedaction(workflow: WorkflowDef, info: ModelInfo): TriggerRedaction {
  return {
    record: automationRedaction(info, namedTriggerFields(workflow, 'record')),
    old: automationRedaction(info, namedTriggerFields(workflow, 'old')),
  };
}
