/**
 * `defineSchema({ actions })` and the per-model `on` bindings (CONTRACT
 * section 11) -> ActionDef[] and ActionBinding[]. Every unknown action,
 * model, field, role, event or condition is a diagnostic with its line.
 */
import { DEFAULT_ACTION_ACCESS, RECORD_EVENTS, type ActionBinding, type ActionDef, type ActionInput, type InputField, type RecordEvent } from '../../runtime/ir/automation.ts';
import { sortBindings } from '../../runtime/ir/snapshot-automation.ts';
import { ROLES, SCALARS, type AccessRule, type Model, type Role, type Scalar } from '../../runtime/ir/types.ts';
import type { RawModelOptions, RawValue } from '../parse/index.ts';
import { buildEventCondition } from './conditions.ts';
import { actionInputTypeName } from './naming.ts';
import { IDENTIFIER, jsonNames, storedField, type RawObject, type Reporter } from './raw.ts';

export interface ActionContext {
  readonly models: ReadonlyMap<string, Model>;
  readonly enums: ReadonlyMap<string, readonly string[]>;
}

const ACTION_KEYS = ['input', 'access'] as const;
/** `'string'`, `'number?'`, `'DealStage'`, `'string[]'`, `'date[]?'` */
const INPUT_TYPE = /^([A-Za-z][A-Za-z0-9_]*)(\[\])?(\?)?$/;

export function buildActions(raw: RawValue | null | undefined, ctx: ActionContext, r: Reporter): ActionDef[] {
  if (!raw) return [];
  const object = r.object(raw, 'BAD_ACTION', 'actions');
  if (!object) return [];
  const out: ActionDef[] = [];
  for (const entry of object.entries) {
    if (!IDENTIFIER.test(entry.key)) {
      r.report('BAD_NAME', entry, `action name ${entry.key} must start with a letter and hold only letters, digits and _`);
      continue;
    }
    const clash = out.find((a) => actionInputTypeName(a.name) === actionInputTypeName(entry.key));
    if (clash) {
      r.report(clash.name === entry.key ? 'DUPLICATE_DECLARATION' : 'NAME_CLASH', entry, `action ${entry.key} clashes with action ${clash.name} (both are ${actionInputTypeName(entry.key)} in actions.ts)`);
      continue;
    }
    const action = buildAction(entry.key, entry.value, ctx, r);
    if (action) out.push(action);
  }
  return out;
}

function buildAction(name: string, raw: RawValue, ctx: ActionContext, r: Reporter): ActionDef | null {
  const object = r.object(raw, 'BAD_ACTION', `action ${name}`);
  if (!object) return null;
  const entries = r.entries(object, ACTION_KEYS, `action ${name}`);
  const inputRaw = entries.get('input')?.value;
  const input = inputRaw ? buildInput(name, inputRaw, ctx, r) : { kind: 'fields' as const, fields: [] };
  const accessRaw = entries.get('access')?.value;
  const access = accessRaw ? buildActionAccess(name, accessRaw, r) : DEFAULT_ACTION_ACCESS;
  return input && access ? { kind: 'action', name, input, access } : null;
}

function buildInput(action: string, raw: RawValue, ctx: ActionContext, r: Reporter): ActionInput | null {
  const object = r.object(raw, 'BAD_INPUT_TYPE', `input of action ${action}`);
  if (!object) return null;
  const pick = object.entries.find((e) => e.key === 'pick');
  if (pick) {
    if (object.entries.length > 1) return r.report('BAD_INPUT_TYPE', object, `input of action ${action}: pick cannot be mixed with other fields`);
    return buildPick(action, pick.value, ctx, r);
  }
  const fields: InputField[] = [];
  let ok = true;
  for (const entry of object.entries) {
    const field = IDENTIFIER.test(entry.key) ? inputField(action, entry.key, entry.value, ctx, r) : r.report('BAD_NAME', entry, `input field ${entry.key} of action ${action} is not a plain name`);
    if (field) fields.push(field);
    else ok = false;
  }
  return ok ? { kind: 'fields', fields } : null;
}

function inputField(action: string, name: string, raw: RawValue, ctx: ActionContext, r: Reporter): InputField | null {
  const known = `string, number, boolean, date${ctx.enums.size ? `, ${[...ctx.enums.keys()].join(', ')}` : ''}; add [] for a list, ? when optional`;
  const match = raw.kind === 'string' ? INPUT_TYPE.exec(raw.value) : null;
  if (!match) return r.report('BAD_INPUT_TYPE', raw, `input field ${name} of action ${action} must be a type name such as 'string' or 'number?' (${known})`);
  const [, base, list, optional] = match;
  const isScalar = (SCALARS as readonly string[]).includes(base);
  const values = ctx.enums.get(base);
  if (!isScalar && (!values || list)) return r.report('BAD_INPUT_TYPE', raw, `unknown input type ${raw.kind === 'string' ? raw.value : ''} for ${name} of action ${action} (${known})`);
  const type: InputField['type'] = !isScalar ? { kind: 'enum', enum: base, values: values! } : list ? { kind: 'list', of: base as Scalar } : { kind: 'scalar', scalar: base as Scalar };
  return { kind: 'inputField', name, type, required: !optional };
}

function buildPick(action: string, raw: RawValue, ctx: ActionContext, r: Reporter): ActionInput | null {
  const object = r.object(raw, 'BAD_INPUT_TYPE', `pick of action ${action}`);
  if (!object) return null;
  const entries = r.entries(object, ['model', 'fields'], `pick of action ${action}`);
  const modelEntry = entries.get('model');
  const fieldsEntry = entries.get('fields');
  if (!modelEntry || !fieldsEntry) return r.report('BAD_INPUT_TYPE', object, `pick of action ${action} needs model and fields`);
  const modelName = r.string(modelEntry.value, 'BAD_INPUT_TYPE', `pick.model of action ${action}`);
  const model = modelName === null ? undefined : ctx.models.get(modelName);
  if (modelName !== null && !model) r.report('UNKNOWN_MODEL', modelEntry.value, `pick of action ${action} names ${modelName}, which is not a model (models: ${[...ctx.models.keys()].join(', ')})`);
  const items = r.array(fieldsEntry.value, 'BAD_INPUT_TYPE', `pick.fields of action ${action}`);
  if (!model || !items) return null;
  if (items.length === 0) return r.report('BAD_INPUT_TYPE', fieldsEntry.value, `pick.fields of action ${action} is empty`);
  const names = jsonNames(model);
  const fields: string[] = [];
  for (const item of items) {
    const name = r.string(item, 'BAD_INPUT_TYPE', `a pick field of action ${action}`);
    if (name === null) return null;
    const jsonName = names.includes(name) ? name : storedField(model, name)?.inputName;
    if (!jsonName) return r.report('UNKNOWN_FIELD', item, `pick of action ${action}: ${model.name} has no field ${name} (fields: ${names.join(', ')})`);
    if (!fields.includes(jsonName)) fields.push(jsonName);
  }
  return { kind: 'pick', model: model.name, fields };
}

function buildActionAccess(action: string, raw: RawValue, r: Reporter): AccessRule | null {
  if (raw.kind === 'string') {
    if (raw.value === 'authenticated') return { kind: 'authenticated' };
    return r.report('BAD_ACCESS_RULE', raw, `access of action ${action} is '${raw.value}'; expected 'authenticated' or a list of roles (a direct call always needs a signed-in user)`);
  }
  const items = r.array(raw, 'BAD_ACCESS_RULE', `access of action ${action}`);
  const roles = items ? readRoles(items, `access of action ${action}`, r) : null;
  return roles ? { kind: 'roles', roles } : null;
}

/** A list of role names, duplicates dropped; null after reporting an unknown role. */
export function readRoles(items: readonly RawValue[], where: string, r: Reporter): Role[] | null {
  const roles: Role[] = [];
  for (const item of items) {
    const name = r.string(item, 'UNKNOWN_ROLE', `a role in ${where}`);
    if (name === null) return null;
    if (!(ROLES as readonly string[]).includes(name)) return r.report('UNKNOWN_ROLE', item, `unknown role ${name} in ${where} (roles: ${ROLES.join(', ')})`);
    if (!roles.includes(name as Role)) roles.push(name as Role);
  }
  return roles;
}

// ---------------------------------------------------------------- bindings

/** Names declared under actions, also those whose definition has a mistake (so a binding to one is not reported twice). */
export function declaredActionNames(raw: RawValue | null | undefined): string[] {
  return raw?.kind === 'object' ? raw.entries.map((e) => e.key) : [];
}

export function buildBindings(options: readonly RawModelOptions[], actions: readonly string[], ctx: ActionContext, r: Reporter): ActionBinding[] {
  const out: ActionBinding[] = [];
  for (const option of options) {
    const model = ctx.models.get(option.name);
    if (!option.on || !model) continue;
    const object = r.object(option.on, 'BAD_BINDING', `${model.name}.on`);
    if (object) out.push(...modelBindings(model, object, actions, r));
  }
  return sortBindings(out);
}

function modelBindings(model: Model, object: RawObject, actions: readonly string[], r: Reporter): ActionBinding[] {
  const out: ActionBinding[] = [];
  for (const entry of object.entries) {
    if (!(RECORD_EVENTS as readonly string[]).includes(entry.key)) {
      r.report('UNKNOWN_EVENT', entry, `unknown event ${entry.key} in ${model.name}.on (events: ${RECORD_EVENTS.join(', ')}; restore counts as updated, hardDelete as deleted)`);
      continue;
    }
    const event = entry.key as RecordEvent;
    for (const item of r.array(entry.value, 'BAD_BINDING', `${model.name}.on.${event}`) ?? []) {
      const binding = buildBinding(model, event, item, actions, r);
      if (!binding) continue;
      if (out.some((b) => b.event === event && b.action === binding.action)) r.report('BAD_BINDING', item, `action ${binding.action} is bound twice to ${model.name}.${event}`);
      else out.push(binding);
    }
  }
  return out;
}

function buildBinding(model: Model, event: RecordEvent, item: RawValue, actions: readonly string[], r: Reporter): ActionBinding | null {
  const where = `${model.name}.on.${event}`;
  let actionNode: RawValue = item;
  let when: ActionBinding['when'] | undefined = null;
  if (item.kind === 'object') {
    const entries = r.entries(item, ['action', 'when'], `a binding in ${where}`);
    const action = entries.get('action');
    if (!action) return r.report('BAD_BINDING', item, `a binding in ${where} needs action: '<name>'`);
    actionNode = action.value;
    const whenEntry = entries.get('when');
    when = whenEntry ? buildEventCondition(whenEntry.value, model, event, r) : null;
  } else if (item.kind !== 'string') {
    return r.report('BAD_BINDING', item, `a binding in ${where} must be an action name or { action, when }`);
  }
  const name = r.string(actionNode, 'BAD_BINDING', `the action of a binding in ${where}`);
  if (name === null) return null;
  if (!actions.includes(name)) {
    const known = actions.join(', ') || 'none declared';
    return r.report('UNKNOWN_ACTION', actionNode, `${where} names action ${name}, which is not declared in defineSchema actions (actions: ${known})`);
  }
  return when === undefined ? null : { kind: 'binding', model: model.name, event, action: name, when };
}
