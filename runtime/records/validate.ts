/**
 * Validation of `data` against the schema: types, required, @email, @min,
 * @max, @numeric, enum values, embedded blocks and unknown fields. Input may
 * use camelCase or snake_case; the result is keyed by column, in the order
 * given, plus the camelCase form recorded in the event. Every invalid field
 * is reported (CONTRACT section 15), the first one as the error's own field.
 */
import type { EmbedDef, Field } from '../ir/types.ts';
import { FieldErrors, invalid } from './errors.ts';
import type { ColumnInfo, ModelInfo } from './model.ts';
import { camelCase, checkFieldType, isPlainObject, type Embeds } from './values.ts';

export interface ValidData {
  readonly columns: readonly ColumnInfo[];
  /** Stored form of each value, aligned with `columns`. */
  readonly values: readonly unknown[];
  /** camelCase object of what was set (the event's data). */
  readonly data: Readonly<Record<string, unknown>>;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DIGITS = /^\d+$/;

/** @min/@max: value for numbers, length for strings, item count for lists. */
function checkRules(field: Field, value: unknown, path: string): void {
  const rules = field.validation;
  if (field.required && value === '') throw invalid(path, `${path} is required`);
  if (rules.email && typeof value === 'string' && !EMAIL.test(value)) throw invalid(path, `${path} must be an email address`);
  if (rules.numeric && typeof value === 'string' && !DIGITS.test(value)) throw invalid(path, `${path} must contain digits only`);
  const size = typeof value === 'number' ? value : typeof value === 'string' || Array.isArray(value) ? value.length : null;
  if (size === null) return;
  const unit = typeof value === 'number' ? '' : typeof value === 'string' ? ' characters' : ' items';
  if (rules.min !== undefined && size < rules.min) throw invalid(path, `${path} must be at least ${rules.min}${unit}`);
  if (rules.max !== undefined && size > rules.max) throw invalid(path, `${path} must be at most ${rules.max}${unit}`);
}

export class Validator {
  constructor(private readonly embeds: Embeds) {}

  /** Checks one field's value (null allowed only when optional); returns the stored form. */
  field(field: Field, value: unknown, path: string): unknown {
    if (value === null || value === undefined) {
      if (field.required) throw invalid(path, `${path} is required`);
      return null;
    }
    const stored = checkFieldType(field.type, value, path, (embed, v, p) => this.embed(embed, v, p));
    checkRules(field, value, path);
    return stored;
  }

  embed(name: string, value: unknown, path: string): Record<string, unknown> {
    const def = this.embeds.get(name) as EmbedDef;
    if (!isPlainObject(value)) throw invalid(path, `${path} must be an object`);
    const byName = new Map(def.fields.map((f) => [f.name, f]));
    const out: Record<string, unknown> = {};
    const errors = new FieldErrors();
    for (const [key, v] of Object.entries(value)) {
      const field = byName.get(key) ?? byName.get(camelCase(key));
      if (!field) errors.add(`${path}.${key}`, `${path}.${key} is not a field of ${name}`);
      else if (field.name in out) errors.add(`${path}.${key}`, `${path}.${field.name} is given twice`);
      else out[field.name] = errors.check(() => this.field(field, v, `${path}.${field.name}`));
    }
    for (const field of def.fields) {
      if (field.required && !(field.name in out)) errors.add(`${path}.${field.name}`, `${path}.${field.name} is required`);
    }
    errors.throwIfAny();
    return out;
  }

  /** `create` needs every required field without a default; `update` checks only what is present. */
  data(info: ModelInfo, data: unknown, mode: 'create' | 'update'): ValidData {
    if (!isPlainObject(data)) throw invalid('data', 'data must be an object');
    const columns: ColumnInfo[] = [];
    const values: unknown[] = [];
    const out: Record<string, unknown> = {};
    const errors = new FieldErrors();
    for (const [key, value] of Object.entries(data)) {
      const c = errors.check(() => lookup(info, key));
      if (!c) continue;
      if (c.name in out) {
        errors.add(c.name, `${c.name} is given twice`);
        continue;
      }
      const stored = errors.check(() => this.field(c.field!, value, c.name));
      columns.push(c);
      values.push(stored);
      out[c.name] = stored;
    }
    if (mode === 'create') requireMissing(info, out, errors);
    else if (Object.keys(data).length === 0) errors.add('data', 'data must set at least one field');
    errors.throwIfAny();
    return { columns, values, data: out };
  }
}

function lookup(info: ModelInfo, key: string): ColumnInfo {
  const c = info.inputs.get(key);
  if (c) return c;
  if (info.filterable.has(key)) throw invalid(key, `${key} is set by the server`);
  const relation = info.relations.get(key);
  if (relation?.kind === 'belongsTo') throw invalid(key, `${key} is a relation: set ${relation.foreignKeyName}`);
  if (relation) throw invalid(key, `${key} is a relation: set it from the ${relation.target} side`);
  throw invalid(key, `${key} is not a field of ${info.name}`);
}

function requireMissing(info: ModelInfo, given: Record<string, unknown>, errors: FieldErrors): void {
  for (const c of info.columns) {
    const f = c.field;
    if (f && f.required && f.default === undefined && !(c.name in given)) errors.add(c.name, `${c.name} is required`);
  }
}
