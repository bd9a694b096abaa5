/**
 * `when: { changed: [fields], equals: { field: literal } }` of action bindings
 * and event-triggered workflows, checked against the model it watches.
 */
import type { EventCondition, RecordEvent } from '../../runtime/ir/automation.ts';
import type { Field, FieldType, Literal, Model } from '../../runtime/ir/types.ts';
import type { RawValue } from '../parse/index.ts';
import { describe, storedField, type Reporter } from './raw.ts';

const CONDITION_KEYS = ['changed', 'equals'] as const;

/** The condition (null when empty), or undefined after reporting a mistake. */
export function buildEventCondition(raw: RawValue, model: Model, event: RecordEvent, r: Reporter): EventCondition | null | undefined {
  const object = r.object(raw, 'BAD_CONDITION', `when of ${model.name}.${event}`);
  if (!object) return undefined;
  let ok = true;
  const changed: string[] = [];
  const equals: Record<string, Literal | null> = {};
  for (const entry of object.entries) {
    if (!(CONDITION_KEYS as readonly string[]).includes(entry.key)) {
      r.report('UNKNOWN_CONDITION', entry, `unknown condition ${entry.key} in when of ${model.name}.${event} (expected ${CONDITION_KEYS.join(' or ')})`);
      ok = false;
    } else if (entry.key === 'changed') ok = readChanged(entry.value, model, event, changed, r) && ok;
    else ok = readEquals(entry.value, model, equals, r) && ok;
  }
  if (!ok) return undefined;
  return changed.length === 0 && Object.keys(equals).length === 0 ? null : { changed, equals };
}

function readChanged(raw: RawValue, model: Model, event: RecordEvent, out: string[], r: Reporter): boolean {
  if (event !== 'updated') {
    r.report('BAD_CONDITION', raw, `changed applies to updated events only, not ${model.name}.${event}`);
    return false;
  }
  const items = r.array(raw, 'BAD_CONDITION', 'changed');
  if (!items) return false;
  let ok = true;
  for (const item of items) {
    const name = r.string(item, 'BAD_CONDITION', 'a changed entry');
    const field = name === null ? undefined : knownField(model, name, item, r);
    if (field) {
      if (!out.includes(field.name)) out.push(field.name);
    } else ok = false;
  }
  return ok;
}

function readEquals(raw: RawValue, model: Model, out: Record<string, Literal | null>, r: Reporter): boolean {
  const object = r.object(raw, 'BAD_CONDITION', 'equals');
  if (!object) return false;
  let ok = true;
  for (const entry of object.entries) {
    const field = knownField(model, entry.key, entry, r);
    if (!field) {
      ok = false;
      continue;
    }
    const problem = literalProblem(entry.value, field);
    if (problem) {
      r.report('BAD_CONDITION', entry.value, `equals ${model.name}.${field.name}: ${describe(entry.value)} ${problem}`);
      ok = false;
    } else out[field.name] = entry.value.kind === 'null' ? null : (entry.value as { value: Literal }).value;
  }
  return ok;
}

function knownField(model: Model, name: string, node: { readonly at: RawValue['at'] }, r: Reporter): Field | undefined {
  const field = storedField(model, name);
  if (!field) r.report('UNKNOWN_FIELD', node, `${model.name} has no stored field ${name} (fields: ${model.fields.filter((f) => f.column !== null).map((f) => f.name).join(', ')})`);
  return field;
}

/** Why a literal cannot be a value of the field, or null when it can. */
export function literalProblem(value: RawValue, field: Field): string | null {
  if (value.kind === 'null') return field.required ? `cannot be null: ${field.name} is required` : null;
  return typeProblem(value, field.type);
}

function typeProblem(value: RawValue, type: FieldType): string | null {
  switch (type.kind) {
    case 'enum':
      return value.kind === 'string' && type.values.includes(value.value) ? null : `is not one of ${type.values.join(', ')}`;
    case 'belongsTo':
      return value.kind === 'string' ? null : 'is not an id (a string)';
    case 'scalar':
      if (type.scalar === 'date') return value.kind === 'string' && !Number.isNaN(Date.parse(value.value)) ? null : 'is not an ISO date';
      return value.kind === type.scalar ? null : `is not a ${type.scalar}`;
    default:
      return `cannot be compared: a ${type.kind} field`;
  }
}
