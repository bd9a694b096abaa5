/**
 * Which `{{...}}` paths a workflow step may use (CONTRACT section 12):
 * `trigger.record.*` and `trigger.old.*` for event triggers, `trigger.input.*`
 * for manual runs, `trigger.actor.*` for runs someone caused, `steps.<id>.*`
 * of earlier steps and `vars.<name>` set by an earlier `set` step.
 */
import type { WorkflowTrigger } from '../../runtime/ir/automation.ts';
import { scanTemplates, type TemplateRef } from '../../runtime/ir/template.ts';
import type { Model } from '../../runtime/ir/types.ts';
import type { RawValue } from '../parse/index.ts';
import { jsonNames, strings, type Reporter } from './raw.ts';

export const ACTOR_KEYS = ['id', 'role', 'tenantId'] as const;

export interface TemplateScope {
  readonly trigger: WorkflowTrigger;
  /** The event trigger's model. */
  readonly model: Model | null;
  /** Ids of the steps before this one. */
  readonly steps: readonly string[];
  /** This step's id and the later ones, to say "own" or "later" rather than "unknown". */
  readonly laterSteps: readonly string[];
  readonly vars: readonly string[];
}

/** Checks every template in a value; false after reporting one. */
export function checkTemplates(value: RawValue, scope: TemplateScope, r: Reporter): boolean {
  let ok = true;
  for (const node of strings(value)) {
    const scan = scanTemplates(node.value);
    if (!scan.ok) {
      r.report('BAD_TEMPLATE', node, scan.problem);
      ok = false;
      continue;
    }
    for (const ref of scan.refs) {
      const problem = refProblem(ref, scope);
      if (problem) {
        r.report('BAD_TEMPLATE', node, `${ref.text}: ${problem}`);
        ok = false;
      }
    }
  }
  return ok;
}

/** A value that must not hold templates (queue, kind, model names). */
export function hasTemplate(text: string): boolean {
  return text.includes('{{');
}

function refProblem(ref: TemplateRef, scope: TemplateScope): string | null {
  const [root, name, key] = ref.path;
  if (root === 'trigger') return triggerProblem(name, key, scope);
  if (root === 'steps') {
    if (name === undefined) return 'name a step: {{steps.<id>.result}}';
    if (scope.steps.includes(name)) return null;
    if (scope.laterSteps[0] === name) return `step ${name} cannot read its own outcome`;
    return scope.laterSteps.includes(name) ? `step ${name} runs later; a step can read only the steps before it` : `there is no step ${name} before this one`;
  }
  if (root === 'vars') {
    if (name === undefined) return 'name a variable: {{vars.<name>}}';
    return scope.vars.includes(name) ? null : `no earlier set step stores ${name} (set so far: ${scope.vars.join(', ') || 'none'})`;
  }
  return `unknown root ${root} (templates start with trigger, steps or vars)`;
}

function triggerProblem(part: string | undefined, key: string | undefined, scope: TemplateScope): string | null {
  const { trigger, model } = scope;
  switch (part) {
    case 'record':
    case 'old':
      if (trigger.kind !== 'event' || !model) return `trigger.${part} exists only for event triggers (this one is ${trigger.kind})`;
      if (part === 'old' && trigger.event === 'created') return 'trigger.old does not exist for created events';
      return key === undefined || jsonNames(model).includes(key) ? null : `${model.name} has no field ${key} (fields: ${jsonNames(model).join(', ')})`;
    case 'input':
      return trigger.kind === 'manual' ? null : `trigger.input exists only for manual triggers (this one is ${trigger.kind})`;
    case 'actor':
      if (trigger.kind === 'schedule') return 'a scheduled run has no actor';
      return key === undefined || (ACTOR_KEYS as readonly string[]).includes(key) ? null : `trigger.actor has ${ACTOR_KEYS.join(', ')}, not ${key}`;
    default:
      return `unknown trigger.${part ?? ''} (use trigger.record, trigger.old, trigger.input or trigger.actor)`;
  }
}
