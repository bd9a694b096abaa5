/**
 * The snapshot form of actions, bindings and workflows. It reads like the
 * declaration in schema.ts (`on: 'Deal.updated'`, `{ eq: [a, b] }`,
 * `job: { queue, kind }`), with defaults omitted and empty blocks left out,
 * so snapshots written before actions existed load unchanged (as empty lists).
 */
import {
  DEFAULT_ACTION_ACCESS,
  DEFAULT_FAILURE_POLICY,
  DEFAULT_HTTP_TIMEOUT_SECS,
  RECORD_EVENTS,
  type ActionBinding,
  type ActionDef,
  type ActionInput,
  type ConditionOperator,
  type EventCondition,
  type FailurePolicy,
  type HttpMethod,
  type InputField,
  type RecordEvent,
  type StepCondition,
  type TemplateValue,
  type WorkflowDef,
  type WorkflowStep,
  type WorkflowTrigger,
} from './automation.ts';
import { asArray, asObject, asStrings, omitEmpty, ruleFromJson, ruleToJson, sameRule, typeFromJson, type Json, type JsonObject } from './snapshot-json.ts';
import type { Literal, Role, SchemaIR } from './types.ts';

type Automation = Pick<SchemaIR, 'actions' | 'bindings' | 'workflows'>;

// ---------------------------------------------------------------- to JSON

export function automationToJson(ir: Automation): JsonObject {
  const bindings: Record<string, Record<string, Json[]>> = {};
  for (const b of ir.bindings) {
    const events = (bindings[b.model] ??= {});
    (events[b.event] ??= []).push(b.when ? { action: b.action, when: conditionToJson(b.when) } : b.action);
  }
  return omitEmpty({
    actions: Object.fromEntries(ir.actions.map((a) => [a.name, actionToJson(a)])),
    bindings,
    workflows: Object.fromEntries(ir.workflows.map((w) => [w.name, workflowToJson(w)])),
  });
}

function actionToJson(action: ActionDef): JsonObject {
  return omitEmpty({
    input: inputToJson(action.input),
    access: sameRule(action.access, DEFAULT_ACTION_ACCESS) ? null : ruleToJson(action.access),
  });
}

function inputToJson(input: ActionInput): Json {
  if (input.kind === 'pick') return { pick: { model: input.model, fields: [...input.fields] } };
  return input.fields.map((f) => ({ name: f.name, type: inputTypeSpec(f) }));
}

/** As declared: `'string'`, `'number?'`, `'DealStage'`, `'string[]?'`. */
export function inputTypeSpec(field: InputField): string {
  const { type } = field;
  const base = type.kind === 'scalar' ? type.scalar : type.kind === 'list' ? `${type.of}[]` : (type.enum ?? 'string');
  return `${base}${field.required ? '' : '?'}`;
}

function conditionToJson(when: EventCondition): JsonObject {
  return omitEmpty({ changed: when.changed.length ? [...when.changed] : null, equals: { ...when.equals } });
}

function workflowToJson(workflow: WorkflowDef): JsonObject {
  return omitEmpty({
    trigger: triggerToJson(workflow.trigger),
    steps: workflow.steps.map(stepToJson),
    onFailure: sameJson(workflow.onFailure, DEFAULT_FAILURE_POLICY) ? null : policyToJson(workflow.onFailure),
  });
}

function triggerToJson(trigger: WorkflowTrigger): JsonObject {
  switch (trigger.kind) {
    case 'event':
      return omitEmpty({ on: `${trigger.model}.${trigger.event}`, when: trigger.when ? conditionToJson(trigger.when) : null });
    case 'schedule':
      return omitEmpty({ schedule: trigger.cron, timezone: trigger.timezone === 'UTC' ? null : trigger.timezone });
    case 'manual':
      return { manual: [...trigger.roles] };
  }
}

function policyToJson(policy: FailurePolicy): Json {
  return policy.kind === 'retry' ? { retry: { maxAttempts: policy.maxAttempts } } : policy.kind;
}

const STEP_TO_JSON: { [K in WorkflowStep['kind']]: (step: Extract<WorkflowStep, { kind: K }>) => Json } = {
  job: (s) => omitEmpty({ queue: s.queue, kind: s.jobKind, payload: json(s.payload), await: s.await || null }),
  mutation: (s) => ({ [s.operation]: omitEmpty({ model: s.model, id: json(s.recordId), data: json(s.data) }) }),
  http: (s) =>
    omitEmpty({
      method: s.method,
      url: s.url,
      headers: { ...s.headers },
      body: json(s.body),
      timeoutSecs: s.timeoutSecs === DEFAULT_HTTP_TIMEOUT_SECS ? null : s.timeoutSecs,
    }),
  delay: (s) => ({ seconds: s.seconds }),
  set: (s) => json(s.values),
};

function stepToJson(step: WorkflowStep): JsonObject {
  const body = (STEP_TO_JSON[step.kind] as (s: WorkflowStep) => Json)(step);
  return omitEmpty({ id: step.id, if: step.if ? { [step.if.op]: step.if.args.map(json) } : null, [step.kind]: body });
}

function json(value: TemplateValue): Json {
  return value as Json;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// ---------------------------------------------------------------- from JSON

export function automationFromJson(root: JsonObject, enumValues: ReadonlyMap<string, string[]>): Automation {
  const actions = Object.entries(asObject(root.actions ?? {}, 'actions')).map(([name, value]) => actionFromJson(name, asObject(value, `actions.${name}`), enumValues));
  const bindings: ActionBinding[] = [];
  for (const [model, events] of Object.entries(asObject(root.bindings ?? {}, 'bindings'))) {
    for (const [event, list] of Object.entries(asObject(events, `bindings.${model}`))) {
      for (const item of asArray(list, `bindings.${model}.${event}`)) bindings.push(bindingFromJson(model, recordEvent(event), item));
    }
  }
  const workflows = Object.entries(asObject(root.workflows ?? {}, 'workflows')).map(([name, value]) => workflowFromJson(name, asObject(value, `workflows.${name}`)));
  return { actions: byName(actions), bindings: sortBindings(bindings), workflows: byName(workflows) };
}

function actionFromJson(name: string, json: JsonObject, enumValues: ReadonlyMap<string, string[]>): ActionDef {
  const access = json.access === undefined ? DEFAULT_ACTION_ACCESS : ruleFromJson(json.access, `actions.${name}.access`);
  return { kind: 'action', name, input: inputFromJson(json.input ?? [], enumValues), access };
}

function inputFromJson(json: Json, enumValues: ReadonlyMap<string, string[]>): ActionInput {
  if (!Array.isArray(json)) {
    const pick = asObject(asObject(json, 'input').pick, 'input.pick');
    return { kind: 'pick', model: String(pick.model), fields: asStrings(pick.fields, 'input.pick.fields') };
  }
  const fields = json.map((value): InputField => {
    const f = asObject(value, 'input field');
    const match = /^(\w+)(\[\])?(\?)?$/.exec(String(f.type));
    if (!match) throw new Error(`schema snapshot: bad input type ${JSON.stringify(f.type)}`);
    const [, base, list, optional] = match;
    const type: JsonObject = enumValues.has(base) ? { kind: 'enum', enum: base } : list ? { kind: 'list', of: base } : { kind: 'scalar', scalar: base };
    return { kind: 'inputField', name: String(f.name), type: typeFromJson(type, enumValues) as InputField['type'], required: !optional };
  });
  return { kind: 'fields', fields };
}

function bindingFromJson(model: string, event: RecordEvent, item: Json): ActionBinding {
  if (typeof item === 'string') return { kind: 'binding', model, event, action: item, when: null };
  const object = asObject(item, `bindings.${model}.${event}`);
  return { kind: 'binding', model, event, action: String(object.action), when: object.when ? conditionFromJson(asObject(object.when, 'when')) : null };
}

function conditionFromJson(json: JsonObject): EventCondition {
  return { changed: asStrings(json.changed ?? [], 'when.changed'), equals: { ...(asObject(json.equals ?? {}, 'when.equals') as Record<string, Literal | null>) } };
}

function workflowFromJson(name: string, json: JsonObject): WorkflowDef {
  const onFailure = json.onFailure === undefined ? DEFAULT_FAILURE_POLICY : policyFromJson(json.onFailure);
  const steps = asArray(json.steps ?? [], `workflows.${name}.steps`).map((s) => stepFromJson(asObject(s, `workflows.${name}.steps`)));
  return { kind: 'workflow', name, trigger: triggerFromJson(asObject(json.trigger, `workflows.${name}.trigger`)), steps, onFailure };
}

function triggerFromJson(json: JsonObject): WorkflowTrigger {
  if (typeof json.on === 'string') {
    const [model, event] = json.on.split('.');
    return { kind: 'event', model, event: recordEvent(event), when: json.when ? conditionFromJson(asObject(json.when, 'when')) : null };
  }
  if (typeof json.schedule === 'string') return { kind: 'schedule', cron: json.schedule, timezone: typeof json.timezone === 'string' ? json.timezone : 'UTC' };
  const roles = ruleFromJson(json.manual ?? null, 'trigger.manual');
  if (roles.kind !== 'roles') throw new Error('schema snapshot: trigger.manual must list roles');
  return { kind: 'manual', roles: roles.roles as Role[] };
}

function policyFromJson(json: Json): FailurePolicy {
  if (json === 'stop' || json === 'continue') return { kind: json };
  const retry = asObject(asObject(json, 'onFailure').retry, 'onFailure.retry');
  return { kind: 'retry', maxAttempts: Number(retry.maxAttempts) };
}

function stepFromJson(json: JsonObject): WorkflowStep {
  const base = { id: String(json.id), if: json.if ? ifFromJson(asObject(json.if, 'if')) : null };
  if (json.job) {
    const job = asObject(json.job, 'job');
    return { ...base, kind: 'job', queue: String(job.queue), jobKind: String(job.kind), payload: (job.payload ?? null) as TemplateValue, await: job.await === true };
  }
  if (json.mutation) {
    const [operation, value] = Object.entries(asObject(json.mutation, 'mutation'))[0] as ['create' | 'update' | 'delete', Json];
    const m = asObject(value, 'mutation');
    return { ...base, kind: 'mutation', operation, model: String(m.model), recordId: (m.id ?? null) as TemplateValue, data: asObject(m.data ?? {}, 'data') as Record<string, TemplateValue> };
  }
  if (json.http) {
    const h = asObject(json.http, 'http');
    const headers = asObject(h.headers ?? {}, 'http.headers') as Record<string, string>;
    const timeoutSecs = typeof h.timeoutSecs === 'number' ? h.timeoutSecs : DEFAULT_HTTP_TIMEOUT_SECS;
    return { ...base, kind: 'http', method: String(h.method) as HttpMethod, url: String(h.url), headers, body: (h.body ?? null) as TemplateValue, timeoutSecs };
  }
  if (json.delay) return { ...base, kind: 'delay', seconds: Number(asObject(json.delay, 'delay').seconds) };
  if (json.set) return { ...base, kind: 'set', values: asObject(json.set, 'set') as Record<string, TemplateValue> };
  throw new Error(`schema snapshot: step ${base.id} has no known kind`);
}

function ifFromJson(json: JsonObject): StepCondition {
  const [op, args] = Object.entries(json)[0];
  return { kind: 'condition', op: op as ConditionOperator, args: asArray(args, `if.${op}`) as TemplateValue[] };
}

function recordEvent(name: string | undefined): RecordEvent {
  if (!(RECORD_EVENTS as readonly string[]).includes(name ?? '')) throw new Error(`schema snapshot: unknown record event ${name}`);
  return name as RecordEvent;
}

/** The IR's order: by model, then event in RECORD_EVENTS order, then declared order (a stable sort keeps it). */
export function sortBindings<T extends { readonly model: string; readonly event: RecordEvent }>(bindings: T[]): T[] {
  return bindings.sort((a, b) => (a.model < b.model ? -1 : a.model > b.model ? 1 : RECORD_EVENTS.indexOf(a.event) - RECORD_EVENTS.indexOf(b.event)));
}

function byName<T extends { readonly name: string }>(items: T[]): T[] {
  return items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
