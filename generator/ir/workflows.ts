/**
 * `defineSchema({ workflows })` (CONTRACT section 12) -> WorkflowDef[]:
 * trigger, steps in order, failure policy. Cron expressions and timezones
 * are checked with croner, the library the engine schedules with.
 */
import { Cron } from 'croner';
import { DEFAULT_FAILURE_POLICY, RECORD_EVENTS, type FailurePolicy, type RecordEvent, type WorkflowDef, type WorkflowStep, type WorkflowTrigger } from '../../runtime/ir/automation.ts';
import type { Model } from '../../runtime/ir/types.ts';
import type { RawValue } from '../parse/index.ts';
import { readRoles } from './actions.ts';
import { buildEventCondition } from './conditions.ts';
import type { Reporter } from './raw.ts';
import { buildStep } from './steps.ts';

const WORKFLOW_KEYS = ['trigger', 'steps', 'onFailure'] as const;
const TRIGGER_KINDS = ['on', 'schedule', 'manual'] as const;
const WORKFLOW_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
export const MAX_RETRY_ATTEMPTS = 25;

export function buildWorkflows(raw: RawValue | null | undefined, models: ReadonlyMap<string, Model>, r: Reporter): WorkflowDef[] {
  if (!raw) return [];
  const object = r.object(raw, 'BAD_WORKFLOW', 'workflows');
  if (!object) return [];
  const out: WorkflowDef[] = [];
  for (const entry of object.entries) {
    if (!WORKFLOW_NAME.test(entry.key)) r.report('BAD_NAME', entry, `workflow name ${entry.key} must start with a letter and hold only letters, digits, _ and -`);
    else if (out.some((w) => w.name === entry.key)) r.report('DUPLICATE_DECLARATION', entry, `workflow ${entry.key} is declared twice`);
    else {
      const workflow = buildWorkflow(entry.key, entry.value, models, r);
      if (workflow) out.push(workflow);
    }
  }
  return out;
}

function buildWorkflow(name: string, raw: RawValue, models: ReadonlyMap<string, Model>, r: Reporter): WorkflowDef | null {
  const object = r.object(raw, 'BAD_WORKFLOW', `workflow ${name}`);
  if (!object) return null;
  const entries = r.entries(object, WORKFLOW_KEYS, `workflow ${name}`);
  const triggerEntry = entries.get('trigger');
  const stepsEntry = entries.get('steps');
  if (!triggerEntry || !stepsEntry) return r.report('BAD_WORKFLOW', object, `workflow ${name} needs a trigger and steps`);
  const trigger = buildTrigger(name, triggerEntry.value, models, r);
  const policyEntry = entries.get('onFailure');
  const onFailure = policyEntry ? buildPolicy(name, policyEntry.value, r) : DEFAULT_FAILURE_POLICY;
  const steps = trigger ? buildSteps(name, stepsEntry.value, trigger, models, r) : null;
  return trigger && steps && onFailure ? { kind: 'workflow', name, trigger, steps, onFailure } : null;
}

function buildSteps(workflow: string, raw: RawValue, trigger: WorkflowTrigger, models: ReadonlyMap<string, Model>, r: Reporter): WorkflowStep[] | null {
  const items = r.array(raw, 'BAD_WORKFLOW', `steps of workflow ${workflow}`);
  if (!items) return null;
  if (items.length === 0) return r.report('BAD_WORKFLOW', raw, `workflow ${workflow} has no steps`);
  const ids = items.map((item) => (item.kind === 'object' ? item.entries.find((e) => e.key === 'id')?.value : undefined)).map((v) => (v?.kind === 'string' ? v.value : ''));
  const model = trigger.kind === 'event' ? (models.get(trigger.model) ?? null) : null;
  const steps: WorkflowStep[] = [];
  const vars: string[] = [];
  let ok = true;
  items.forEach((item, i) => {
    const scope = { trigger, model, steps: ids.slice(0, i), laterSteps: ids.slice(i), vars: [...vars] };
    const step = buildStep(workflow, item, scope, models, r);
    if (step && steps.some((s) => s.id === step.id)) {
      r.report('DUPLICATE_STEP', item, `workflow ${workflow} has two steps with id ${step.id}`);
      ok = false;
    } else if (step) {
      steps.push(step);
      if (step.kind === 'set') vars.push(...Object.keys(step.values).filter((v) => !vars.includes(v)));
    } else ok = false;
  });
  return ok ? steps : null;
}

function buildTrigger(workflow: string, raw: RawValue, models: ReadonlyMap<string, Model>, r: Reporter): WorkflowTrigger | null {
  const object = r.object(raw, 'BAD_TRIGGER', `trigger of workflow ${workflow}`);
  if (!object) return null;
  const entries = r.entries(object, [...TRIGGER_KINDS, 'when', 'timezone'], `trigger of workflow ${workflow}`);
  const kinds = TRIGGER_KINDS.filter((k) => entries.has(k));
  if (kinds.length !== 1) {
    return r.report('BAD_TRIGGER', object, `trigger of workflow ${workflow} needs exactly one of on: 'Model.event', schedule: '<cron>' or manual: [roles] (found ${kinds.join(', ') || 'none'})`);
  }
  const stray = entries.get('when') && kinds[0] !== 'on' ? entries.get('when') : entries.get('timezone') && kinds[0] !== 'schedule' ? entries.get('timezone') : undefined;
  if (stray) return r.report('BAD_TRIGGER', stray, `${stray.key} does not apply to a ${kinds[0]} trigger`);
  const value = entries.get(kinds[0])!.value;
  if (kinds[0] === 'on') return eventTrigger(workflow, value, entries.get('when')?.value, models, r);
  if (kinds[0] === 'schedule') return scheduleTrigger(workflow, value, entries.get('timezone')?.value, r);
  const roles = r.array(value, 'BAD_TRIGGER', `manual trigger of workflow ${workflow}`);
  const checked = roles ? readRoles(roles, `manual trigger of workflow ${workflow}`, r) : null;
  return checked ? { kind: 'manual', roles: checked } : null;
}

function eventTrigger(workflow: string, raw: RawValue, when: RawValue | undefined, models: ReadonlyMap<string, Model>, r: Reporter): WorkflowTrigger | null {
  const text = r.string(raw, 'BAD_TRIGGER', `on of workflow ${workflow}`);
  if (text === null) return null;
  const match = /^([A-Za-z_]\w*)\.(\w+)$/.exec(text);
  if (!match) return r.report('BAD_TRIGGER', raw, `on of workflow ${workflow} is '${text}'; write 'Model.created', 'Model.updated' or 'Model.deleted'`);
  const model = models.get(match[1]);
  if (!model) return r.report('UNKNOWN_MODEL', raw, `workflow ${workflow} is triggered by ${match[1]}, which is not a model (models: ${[...models.keys()].join(', ')})`);
  if (!(RECORD_EVENTS as readonly string[]).includes(match[2])) {
    return r.report('UNKNOWN_EVENT', raw, `unknown event ${match[2]} in on of workflow ${workflow} (events: ${RECORD_EVENTS.join(', ')})`);
  }
  const event = match[2] as RecordEvent;
  const condition = when ? buildEventCondition(when, model, event, r) : null;
  return condition === undefined ? null : { kind: 'event', model: model.name, event, when: condition };
}

function scheduleTrigger(workflow: string, raw: RawValue, tzRaw: RawValue | undefined, r: Reporter): WorkflowTrigger | null {
  const cron = r.string(raw, 'BAD_CRON', `schedule of workflow ${workflow}`);
  const timezone = tzRaw ? r.string(tzRaw, 'BAD_TIMEZONE', `timezone of workflow ${workflow}`) : 'UTC';
  if (cron === null || timezone === null) return null;
  const tzProblem = cronProblem('* * * * *', timezone);
  if (tzProblem) return r.report('BAD_TIMEZONE', tzRaw!, `timezone of workflow ${workflow} is '${timezone}', not an IANA timezone such as 'UTC' or 'Europe/Berlin'`);
  const problem = cronProblem(cron, timezone);
  return problem ? r.report('BAD_CRON', raw, `schedule of workflow ${workflow} '${cron}': ${problem}`) : { kind: 'schedule', cron, timezone };
}

/** croner's complaint about a pattern in a timezone, or null when it fires at some time. */
function cronProblem(pattern: string, timezone: string): string | null {
  try {
    const job = new Cron(pattern, { timezone, paused: true });
    const next = job.nextRun();
    job.stop();
    return next ? null : 'it never fires';
  } catch (error) {
    return (error as Error).message;
  }
}

function buildPolicy(workflow: string, raw: RawValue, r: Reporter): FailurePolicy | null {
  if (raw.kind === 'string' && (raw.value === 'stop' || raw.value === 'continue')) return { kind: raw.value };
  const retry = raw.kind === 'object' && raw.entries.length === 1 && raw.entries[0].key === 'retry' ? raw.entries[0].value : null;
  const attempts = retry?.kind === 'object' && retry.entries.length === 1 && retry.entries[0].key === 'maxAttempts' ? retry.entries[0].value : null;
  if (attempts?.kind === 'number' && Number.isInteger(attempts.value) && attempts.value >= 1 && attempts.value <= MAX_RETRY_ATTEMPTS) {
    return { kind: 'retry', maxAttempts: attempts.value };
  }
  return r.report('BAD_FAILURE_POLICY', raw, `onFailure of workflow ${workflow} must be 'stop', 'continue' or { retry: { maxAttempts: 1..${MAX_RETRY_ATTEMPTS} } }`);
}
