/**
 * One workflow step -> WorkflowStep: its kind (job, mutation, http, delay,
 * set), its `if`, and every template it holds checked against what the
 * step can see (template-scope.ts).
 */
import {
  CONDITION_OPERATORS,
  DEFAULT_HTTP_TIMEOUT_SECS,
  HTTP_METHODS,
  MAX_HTTP_TIMEOUT_SECS,
  STEP_KINDS,
  type ConditionOperator,
  type HttpMethod,
  type StepCondition,
  type StepKind,
  type TemplateValue,
  type WorkflowStep,
} from '../../runtime/ir/automation.ts';
import type { Model } from '../../runtime/ir/types.ts';
import type { RawValue } from '../parse/index.ts';
import { literalProblem } from './conditions.ts';
import { IDENTIFIER, describe, storedField, toJson, type Reporter } from './raw.ts';
import { checkTemplates, hasTemplate, type TemplateScope } from './template-scope.ts';

interface StepCtx {
  readonly where: string;
  readonly scope: TemplateScope;
  readonly models: ReadonlyMap<string, Model>;
  readonly r: Reporter;
}

type StepBody<K extends StepKind> = Omit<Extract<WorkflowStep, { kind: K }>, 'id' | 'if'>;
const BUILDERS: { [K in StepKind]: (raw: RawValue, ctx: StepCtx) => StepBody<K> | null } = {
  job: buildJob,
  mutation: buildMutation,
  http: buildHttp,
  delay: buildDelay,
  set: buildSet,
};

const DELAY_UNITS = { seconds: 1, minutes: 60, hours: 3600, days: 86400 } as const;

export function buildStep(workflow: string, raw: RawValue, scope: TemplateScope, models: ReadonlyMap<string, Model>, r: Reporter): WorkflowStep | null {
  const object = r.object(raw, 'BAD_STEP', `a step of workflow ${workflow}`);
  if (!object) return null;
  const idEntry = object.entries.find((e) => e.key === 'id');
  const id = idEntry ? r.string(idEntry.value, 'BAD_STEP', `the id of a step of workflow ${workflow}`) : r.report('BAD_STEP', object, `a step of workflow ${workflow} needs an id`);
  if (id === null) return null;
  if (!IDENTIFIER.test(id)) return r.report('BAD_NAME', idEntry!.value, `step id ${id} of workflow ${workflow} must start with a letter and hold only letters, digits and _`);
  const where = `step ${id} of workflow ${workflow}`;
  const unknown = object.entries.filter((e) => e.key !== 'id' && e.key !== 'if' && !(STEP_KINDS as readonly string[]).includes(e.key));
  for (const e of unknown) r.report('UNKNOWN_STEP_KIND', e, `unknown step kind ${e.key} in ${where} (kinds: ${STEP_KINDS.join(', ')})`);
  const kinds = object.entries.filter((e) => (STEP_KINDS as readonly string[]).includes(e.key));
  if (kinds.length === 0 && unknown.length === 0) return r.report('UNKNOWN_STEP_KIND', object, `${where} has no kind (kinds: ${STEP_KINDS.join(', ')})`);
  if (kinds.length > 1) return r.report('BAD_STEP', kinds[1], `${where} has two kinds, ${kinds.map((k) => k.key).join(' and ')}; use one step for each`);
  if (unknown.length > 0) return null;
  const ctx: StepCtx = { where, scope, models, r };
  const ifEntry = object.entries.find((e) => e.key === 'if');
  const condition = ifEntry ? buildCondition(ifEntry.value, ctx) : null;
  const kind = kinds[0].key as StepKind;
  const body = (BUILDERS[kind] as (raw: RawValue, ctx: StepCtx) => StepBody<StepKind> | null)(kinds[0].value, ctx);
  if (!body || condition === undefined) return null;
  return { id, if: condition, ...body } as WorkflowStep;
}

/** `{ eq: [a, b] }`: one operator, two operands (`exists`: one). */
function buildCondition(raw: RawValue, ctx: StepCtx): StepCondition | null | undefined {
  const { r, where } = ctx;
  const object = r.object(raw, 'BAD_CONDITION', `if of ${where}`);
  if (!object) return undefined;
  if (object.entries.length !== 1) return void r.report('BAD_CONDITION', object, `if of ${where} needs exactly one operator (${CONDITION_OPERATORS.join(' ')}), found ${object.entries.length}`);
  const [{ key, value }] = object.entries;
  if (!(CONDITION_OPERATORS as readonly string[]).includes(key)) {
    return void r.report('UNKNOWN_CONDITION', object.entries[0], `unknown condition operator ${key} in if of ${where} (operators: ${CONDITION_OPERATORS.join(' ')})`);
  }
  const op = key as ConditionOperator;
  const arity = op === 'exists' ? 1 : 2;
  if (value.kind !== 'array' || value.items.length !== arity) {
    return void r.report('BAD_CONDITION', value, `${op} in if of ${where} takes ${arity === 1 ? 'one operand: { exists: [a] }' : `two operands: { ${op}: [a, b] }`}`);
  }
  const list = value.items[1];
  if (op === 'in' && list.kind !== 'array' && !(list.kind === 'string' && hasTemplate(list.value))) {
    return void r.report('BAD_CONDITION', list, `in in if of ${where} needs a list (or a template) as its second operand, not ${describe(list)}`);
  }
  if (!checkTemplates(value, ctx.scope, r)) return undefined;
  return { kind: 'condition', op, args: value.items.map(toJson) };
}

function fields(raw: RawValue, allowed: readonly string[], what: string, ctx: StepCtx): Map<string, RawValue> | null {
  const object = ctx.r.object(raw, 'BAD_STEP', what);
  if (!object) return null;
  const known = new Map<string, RawValue>();
  for (const entry of object.entries) {
    if (allowed.includes(entry.key)) known.set(entry.key, entry.value);
    else ctx.r.report('BAD_STEP', entry, `unknown option ${entry.key} in ${what} (expected ${allowed.join(', ')})`);
  }
  return known.size === object.entries.length ? known : null;
}

/** A required literal name without templates (queue, kind, model). */
function name(value: RawValue | undefined, what: string, node: RawValue, ctx: StepCtx): string | null {
  if (!value) return ctx.r.report('BAD_STEP', node, `${ctx.where} needs ${what}`);
  const text = ctx.r.string(value, 'BAD_STEP', `${what} of ${ctx.where}`);
  if (text === null) return null;
  if (text.trim() === '' || hasTemplate(text)) return ctx.r.report('BAD_STEP', value, `${what} of ${ctx.where} must be a fixed, non-blank name`);
  return text;
}

function templated(value: RawValue | undefined, ctx: StepCtx): { value: TemplateValue } | null {
  if (!value) return { value: null };
  if (!checkTemplates(value, ctx.scope, ctx.r)) return null;
  const json = toJson(value);
  const empty = json !== null && typeof json === 'object' && !Array.isArray(json) && Object.keys(json).length === 0;
  return { value: empty ? null : json };
}

function buildJob(raw: RawValue, ctx: StepCtx): StepBody<'job'> | null {
  const f = fields(raw, ['queue', 'kind', 'payload', 'await'], `job of ${ctx.where}`, ctx);
  if (!f) return null;
  const queue = name(f.get('queue'), 'queue', raw, ctx);
  const jobKind = name(f.get('kind'), 'kind', raw, ctx);
  const payload = templated(f.get('payload'), ctx);
  const awaitRaw = f.get('await');
  if (awaitRaw && awaitRaw.kind !== 'boolean') return ctx.r.report('BAD_STEP', awaitRaw, `await of ${ctx.where} must be true or false`);
  if (queue === null || jobKind === null || !payload) return null;
  return { kind: 'job', queue, jobKind, payload: payload.value, await: awaitRaw?.kind === 'boolean' && awaitRaw.value };
}

function buildMutation(raw: RawValue, ctx: StepCtx): StepBody<'mutation'> | null {
  const { r, where } = ctx;
  const object = r.object(raw, 'BAD_STEP', `mutation of ${where}`);
  if (!object) return null;
  if (object.entries.length !== 1 || !['create', 'update', 'delete'].includes(object.entries[0].key)) {
    return r.report('BAD_STEP', object, `mutation of ${where} must be { create: {...} }, { update: {...} } or { delete: {...} }`);
  }
  const operation = object.entries[0].key as 'create' | 'update' | 'delete';
  const allowed = operation === 'create' ? ['model', 'data'] : operation === 'update' ? ['model', 'id', 'data'] : ['model', 'id'];
  const f = fields(object.entries[0].value, allowed, `mutation ${operation} of ${where}`, ctx);
  if (!f) return null;
  const modelName = name(f.get('model'), 'model', object, ctx);
  const model = modelName === null ? undefined : ctx.models.get(modelName);
  if (modelName !== null && !model) return r.report('UNKNOWN_MODEL', f.get('model')!, `${where} names ${modelName}, which is not a model (models: ${[...ctx.models.keys()].join(', ')})`);
  if (!model) return null;
  if (operation !== 'create' && !f.has('id')) return r.report('BAD_STEP', object, `mutation ${operation} of ${where} needs id (for example '{{trigger.record.id}}')`);
  if (operation !== 'delete' && !f.has('data')) return r.report('BAD_STEP', object, `mutation ${operation} of ${where} needs data`);
  const idRaw = f.get('id');
  if (idRaw && idRaw.kind !== 'string') return r.report('BAD_STEP', idRaw, `id of mutation ${operation} of ${where} must be a string such as '{{trigger.record.id}}', not ${describe(idRaw)}`);
  const recordId = templated(idRaw, ctx);
  const data = operation === 'delete' ? {} : mutationData(f.get('data')!, model, operation, ctx);
  if (!recordId || !data) return null;
  return { kind: 'mutation', operation, model: model.name, recordId: recordId.value, data };
}

/** data keys are the model's input names (`companyId`); literals must fit the field. */
function mutationData(raw: RawValue, model: Model, operation: 'create' | 'update', ctx: StepCtx): Record<string, TemplateValue> | null {
  const { r, where } = ctx;
  const object = r.object(raw, 'BAD_STEP', `data of ${where}`);
  if (!object) return null;
  let ok = checkTemplates(raw, ctx.scope, r);
  const out: Record<string, TemplateValue> = {};
  for (const entry of object.entries) {
    const field = storedField(model, entry.key);
    if (!field || field.inputName !== entry.key) {
      const hint = field ? ` (write ${field.inputName})` : ` (fields: ${model.fields.filter((x) => x.column !== null).map((x) => x.inputName).join(', ')})`;
      r.report('UNKNOWN_FIELD', entry, `${where}: ${model.name} has no input field ${entry.key}${hint}`);
      ok = false;
      continue;
    }
    const literal = entry.value.kind !== 'array' && entry.value.kind !== 'object' && !(entry.value.kind === 'string' && hasTemplate(entry.value.value));
    const problem = literal && (field.type.kind === 'scalar' || field.type.kind === 'enum' || field.type.kind === 'belongsTo') ? literalProblem(entry.value, field) : null;
    if (problem) {
      r.report('BAD_STEP', entry.value, `${where}: ${model.name}.${field.name} ${describe(entry.value)} ${problem}`);
      ok = false;
    }
    out[entry.key] = toJson(entry.value);
  }
  const missing = operation === 'create' ? model.fields.filter((x) => x.required && x.default === undefined && x.column !== null && !(x.inputName in out)) : [];
  if (ok && missing.length > 0) {
    r.report('BAD_STEP', object, `${where} creates a ${model.name} without its required ${missing.map((x) => x.inputName).join(', ')}`);
    ok = false;
  }
  if (ok && operation === 'update' && object.entries.length === 0) {
    r.report('BAD_STEP', object, `${where} updates nothing: data is empty`);
    ok = false;
  }
  return ok ? out : null;
}

function buildHttp(raw: RawValue, ctx: StepCtx): StepBody<'http'> | null {
  const { r, where } = ctx;
  const f = fields(raw, ['method', 'url', 'headers', 'body', 'timeoutSecs'], `http of ${where}`, ctx);
  if (!f) return null;
  const method = name(f.get('method'), 'method', raw, ctx);
  if (method !== null && !(HTTP_METHODS as readonly string[]).includes(method)) return r.report('BAD_STEP', f.get('method')!, `method of ${where} must be one of ${HTTP_METHODS.join(', ')}`);
  const urlRaw = f.get('url');
  const url = urlRaw ? r.string(urlRaw, 'BAD_STEP', `url of ${where}`) : r.report('BAD_STEP', raw, `${where} needs url`);
  if (url !== null && urlRaw && !fixedOrigin(url)) return r.report('BAD_STEP', urlRaw, `url of ${where} must be an absolute http(s) URL whose origin is fixed (templates only after the host)`);
  const headers = f.get('headers') ? headerMap(f.get('headers')!, ctx) : {};
  const body = templated(f.get('body'), ctx);
  const timeoutSecs = httpTimeout(f.get('timeoutSecs'), ctx);
  if (method === null || url === null || !urlRaw || !headers || !body || timeoutSecs === null || !checkTemplates(urlRaw, ctx.scope, r)) return null;
  return { kind: 'http', method: method as HttpMethod, url, headers, body: body.value, timeoutSecs };
}

function httpTimeout(raw: RawValue | undefined, ctx: StepCtx): number | null {
  if (!raw) return DEFAULT_HTTP_TIMEOUT_SECS;
  if (raw.kind === 'number' && Number.isInteger(raw.value) && raw.value >= 1 && raw.value <= MAX_HTTP_TIMEOUT_SECS) return raw.value;
  return ctx.r.report('BAD_STEP', raw, `timeoutSecs of ${ctx.where} must be a whole number of seconds from 1 to ${MAX_HTTP_TIMEOUT_SECS}`);
}

function fixedOrigin(url: string): boolean {
  const cut = url.indexOf('{{');
  const head = cut < 0 ? url : url.slice(0, cut);
  try {
    const parsed = new URL(head);
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && (cut < 0 || /^https?:\/\/[^/]+\//.test(head));
  } catch {
    return false;
  }
}

function headerMap(raw: RawValue, ctx: StepCtx): Record<string, string> | null {
  const object = ctx.r.object(raw, 'BAD_STEP', `headers of ${ctx.where}`);
  if (!object || !checkTemplates(raw, ctx.scope, ctx.r)) return null;
  const out: Record<string, string> = {};
  for (const entry of object.entries) {
    const value = ctx.r.string(entry.value, 'BAD_STEP', `header ${entry.key} of ${ctx.where}`);
    if (value === null) return null;
    out[entry.key] = value;
  }
  return out;
}

function buildDelay(raw: RawValue, ctx: StepCtx): StepBody<'delay'> | null {
  const f = fields(raw, Object.keys(DELAY_UNITS), `delay of ${ctx.where}`, ctx);
  if (!f) return null;
  let seconds = 0;
  for (const [unit, value] of f) {
    if (value.kind !== 'number' || !Number.isInteger(value.value) || value.value < 0) return ctx.r.report('BAD_STEP', value, `${unit} of ${ctx.where} must be a whole number, not ${describe(value)}`);
    seconds += value.value * DELAY_UNITS[unit as keyof typeof DELAY_UNITS];
  }
  return seconds > 0 ? { kind: 'delay', seconds } : ctx.r.report('BAD_STEP', raw, `delay of ${ctx.where} must wait a positive time, e.g. { seconds: 30 } or { days: 1 }`);
}

function buildSet(raw: RawValue, ctx: StepCtx): StepBody<'set'> | null {
  const object = ctx.r.object(raw, 'BAD_STEP', `set of ${ctx.where}`);
  if (!object) return null;
  if (object.entries.length === 0) return ctx.r.report('BAD_STEP', object, `set of ${ctx.where} stores nothing`);
  const bad = object.entries.find((e) => !IDENTIFIER.test(e.key));
  if (bad) return ctx.r.report('BAD_NAME', bad, `variable name ${bad.key} in ${ctx.where} must start with a letter and hold only letters, digits and _`);
  if (!checkTemplates(raw, ctx.scope, ctx.r)) return null;
  return { kind: 'set', values: Object.fromEntries(object.entries.map((e) => [e.key, toJson(e.value)])) };
}
