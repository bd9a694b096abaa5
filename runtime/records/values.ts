/**
 * Type checks of single input values against the schema, shared by `data`
 * validation and `where` filters: a wrong type is a VALIDATION_ERROR naming
 * the field, never a Postgres cast error (a 500).
 */
import type { EmbedDef, Field, FieldType, Scalar } from '../ir/types.ts';
import { invalid } from './errors.ts';
import type { ColumnInfo } from './model.ts';

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/;

export type Embeds = ReadonlyMap<string, EmbedDef>;

/** A JSON-safe date: an ISO 8601 string (kept as written: microseconds survive) or epoch milliseconds. */
export function checkDate(value: unknown, path: string): string {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date.toISOString();
  }
  if (typeof value === 'string' && ISO_DATE.test(value) && !Number.isNaN(Date.parse(value))) return value;
  throw invalid(path, `${path} must be an ISO 8601 date-time`);
}

export function checkScalar(scalar: Scalar, value: unknown, path: string): unknown {
  switch (scalar) {
    case 'string':
      if (typeof value !== 'string') throw invalid(path, `${path} must be a string`);
      return value;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(path, `${path} must be a number`);
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw invalid(path, `${path} must be a boolean`);
      return value;
    case 'date':
      return checkDate(value, path);
  }
}

function checkEnum(values: readonly string[], value: unknown, path: string): string {
  if (typeof value !== 'string' || !values.includes(value)) {
    throw invalid(path, `${path} must be one of ${values.join(', ')}`);
  }
  return value;
}

/**
 * Checks a non-null value of a declared field's type; returns it in the form
 * stored (dates normalised). Embedded blocks are checked by `checkEmbed`,
 * passed in so that their own field rules (required, min ...) apply too.
 */
export function checkFieldType(
  type: FieldType, value: unknown, path: string, checkEmbed: (embed: string, value: unknown, path: string) => unknown,
): unknown {
  switch (type.kind) {
    case 'scalar': return checkScalar(type.scalar, value, path);
    case 'enum': return checkEnum(type.values, value, path);
    case 'belongsTo':
      if (typeof value !== 'string' || value === '') throw invalid(path, `${path} must be a record id`);
      return value;
    case 'list':
      if (!Array.isArray(value)) throw invalid(path, `${path} must be a list`);
      return value.map((item, i) => checkScalar(type.of, item, `${path}.${i}`));
    case 'embed':
      if (!type.list) return checkEmbed(type.embed, value, path);
      if (!Array.isArray(value)) throw invalid(path, `${path} must be a list`);
      return value.map((item, i) => checkEmbed(type.embed, item, `${path}.${i}`));
    case 'hasMany':
      throw invalid(path, `${path} is a relation: set it from the other side`);
  }
}

const SYSTEM_SCALARS: Record<string, Scalar> = {
  id: 'string', tenant_id: 'string', created_at: 'date', updated_at: 'date', deleted_at: 'date',
};

/** A value compared with a column in `where` or a cursor; jsonb columns cannot be compared. */
export function checkFilterValue(c: ColumnInfo, value: unknown, path: string): unknown {
  if (!c.field) return checkScalar(SYSTEM_SCALARS[c.column], value, path);
  const kind = c.field.type.kind;
  if (kind === 'embed' || kind === 'list') throw invalid(path, `${path} can only be tested with isNull`);
  return checkFieldType(c.field.type, value, path, () => undefined);
}

/** `lastContactAt` for `last_contact_at`: embedded blocks accept both casings too. */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export type { Field };
