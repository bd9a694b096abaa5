/**
 * A direct call's `input`, checked against the action's declaration: every
 * mistake is a 400 VALIDATION_ERROR naming the field (`input.leadId`). Named
 * fields take their declared types; a pick takes the picked fields of the
 * model, typed and constrained as on the model (required as on the model).
 */
import type { ActionDef, InputField } from '../ir/types.ts';
import type { ModelInfo } from '../records/model.ts';
import { checkFieldType, checkScalar, isPlainObject } from '../records/values.ts';
import type { Validator } from '../records/validate.ts';
import { invalidField } from '../http/errors.ts';
import { rejectNul, rejectTooDeep } from '../http/input.ts';

const SYSTEM_SCALARS = { id: 'string', tenantId: 'string', createdAt: 'date', updatedAt: 'date', deletedAt: 'date' } as const;

export interface InputContext {
  readonly models: ReadonlyMap<string, ModelInfo>;
  readonly validator: Validator;
}

export function checkInput(action: ActionDef, value: unknown, ctx: InputContext): Record<string, unknown> {
  const input = value === undefined || value === null ? {} : value;
  if (!isPlainObject(input)) throw invalidField('input', 'input must be an object');
  rejectTooDeep(input, 'input');
  rejectNul(input, 'input');
  return action.input.kind === 'fields'
    ? checkFields(action.input.fields, input)
    : checkPick(ctx.models.get(action.input.model)!, action.input.fields, input, ctx.validator);
}

function unknownKeys(input: Record<string, unknown>, known: readonly string[], action: string): void {
  const extra = Object.keys(input).find((key) => !known.includes(key));
  if (extra !== undefined) throw invalidField(`input.${extra}`, `input.${extra} is not an input of ${action} (inputs: ${known.join(', ') || 'none'})`);
}

function checkFields(fields: readonly InputField[], input: Record<string, unknown>): Record<string, unknown> {
  unknownKeys(input, fields.map((f) => f.name), 'this action');
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const path = `input.${field.name}`;
    const value = input[field.name];
    if (value === undefined || value === null) {
      if (field.required) throw invalidField(path, `${path} is required`);
      if (value === null) out[field.name] = null;
      continue;
    }
    out[field.name] = checkFieldType(field.type, value, path, () => undefined);
  }
  return out;
}

function checkPick(info: ModelInfo, fields: readonly string[], input: Record<string, unknown>, validator: Validator): Record<string, unknown> {
  unknownKeys(input, fields, 'this action');
  const out: Record<string, unknown> = {};
  for (const name of fields) {
    const path = `input.${name}`;
    const value = input[name];
    const column = info.columns.find((c) => c.name === name);
    if (column?.field) {
      const stored = validator.field(column.field, value, path);
      if (value !== undefined) out[name] = stored;
      continue;
    }
    // A system column: `id` is required (the record the action is about); the others are optional.
    if (value === undefined || value === null) {
      if (name === 'id') throw invalidField(path, `${path} is required`);
      if (value === null) out[name] = null;
      continue;
    }
    out[name] = checkScalar(SYSTEM_SCALARS[name as keyof typeof SYSTEM_SCALARS] ?? 'string', value, path);
  }
  return out;
}
