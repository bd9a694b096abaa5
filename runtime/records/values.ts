/**
 * Type checks of single input values against the schema, shared by `data`
 * validation and `where` filters: a wrong type is a VALIDATION_ERROR naming
 * the field, never a Postgres cast error (a 500).
 */
import type { EmbedDef, Field, FieldType, Scalar } from '../ir/types.ts';
import { isoUtc } from '../db/index.ts';
import { invalid } from './errors.ts';
import type { ColumnInfo } from './model.ts';

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-](\d{2})(?::?(\d{2}))?)?)?$/;

const daysIn = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();

/**
 * The calendar fields exist: JavaScript rolls `2024-02-30` over to March 1st
 * where Postgres refuses it, so the check cannot be left to Date.parse.
 */
function isRealDate(match: RegExpExecArray): boolean {
  const number = (i: number) => (match[i] === undefined ? 0 : Number(match[i]));
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map(number);
  const [offsetHours, offsetMinutes] = [9, 10].map(number);
  return year >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month)
    && hour <= 23 && minute <= 59 && second <= 59 && offsetHours <= 15 && offsetMinutes <= 59;
}

/** The one response format (ISO 8601, UTC, milliseconds); no offset means UTC, a date alone its midnight. */
function canonicalDate(match: RegExpExecArray): string {
  const [, year, month, day, hour = '00', minute = '00', second = '00', fraction = '', zone = 'Z'] = match;
  return isoUtc(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction}${zone}`);
}

export type Embeds = ReadonlyMap<string, EmbedDef>;

/**
 * A JSON-safe date: an ISO 8601 string or epoch milliseconds. Written values
 * are stored, recorded and answered in the one format (`canonical`); a filter
 * or cursor value is kept exact, as the column holds microseconds.
 */
export function checkDate(value: unknown, path: string, canonical = true): string {
  if (typeof value === 'number' && Number.isFinite(value)) {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date.toISOString();
  }
  const match = typeof value === 'string' ? ISO_DATE.exec(value) : null;
  if (match && isRealDate(match) && !Number.isNaN(Date.parse(value as string))) return canonical ? canonicalDate(match) : value as string;
  throw invalid(path, `${path} must be an ISO 8601 date-time`);
}

export function checkScalar(scalar: Scalar, value: unknown, path: string, canonical = true): unknown {
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
      return checkDate(value, path, canonical);
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
  type: FieldType, value: unknown, path: string, checkEmbed: (embed: string, value: unknown, path: string) => unknown, canonical = true,
): unknown {
  switch (type.kind) {
    case 'scalar': return checkScalar(type.scalar, value, path, canonical);
    case 'enum': return checkEnum(type.values, value, path);
    case 'belongsTo':
      if (typeof value !== 'string' || value === '') throw invalid(path, `${path} must be a record id`);
      return value;
    case 'media':
      if (typeof value !== 'string' || value === '') throw invalid(path, `${path} must be a media id`);
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
  if (!c.field) return checkScalar(SYSTEM_SCALARS[c.column], value, path, false);
  const kind = c.field.type.kind;
  if (kind === 'embed' || kind === 'list') throw invalid(path, `${path} can only be tested with isNull`);
  return checkFieldType(c.field.type, value, path, () => undefined, false);
}

/** `lastContactAt` for `last_contact_at`: embedded blocks accept both casings too. */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export type { Field };
