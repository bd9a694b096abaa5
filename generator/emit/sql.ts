/**
 * SQL fragments shared by migrations and projections. Every identifier is
 * quoted (a field called `order` or `user` must work); SQL is lower-case.
 */
import type { Field, FieldKind, FieldType, Literal, Scalar } from '../../runtime/ir/types.ts';
import { checkName, quoteIdent, quoteLiteral } from '../ir/naming.ts';

const SCALAR_SQL: Record<Scalar, string> = {
  string: 'text',
  number: 'double precision',
  boolean: 'boolean',
  date: 'timestamptz',
};

/** Column type per field kind; null for hasMany (no column). */
const SQL_TYPE: Record<FieldKind, (type: FieldType) => string | null> = {
  scalar: (t) => (t.kind === 'scalar' ? SCALAR_SQL[t.scalar] : null),
  enum: () => 'text',
  embed: () => 'jsonb',
  list: () => 'jsonb',
  belongsTo: () => 'text',
  hasMany: () => null,
  media: () => 'text',
};

export function sqlType(type: FieldType): string | null {
  const convert = SQL_TYPE[type.kind];
  if (!convert) throw new Error(`svc-gen bug: no SQL type for field kind ${type.kind}`);
  return convert(type);
}

export function sqlLiteral(value: Literal): string {
  if (typeof value === 'string') return quoteLiteral(value);
  if (typeof value === 'number') return String(value);
  return value ? 'true' : 'false';
}

/** `"stage" text not null default 'lead'` */
export function columnDefinition(field: Field): string {
  const parts = [quoteIdent(field.column!), sqlType(field.type)!];
  if (field.required) parts.push('not null');
  if (field.default !== undefined) parts.push(`default ${sqlLiteral(field.default)}`);
  return parts.join(' ');
}

/** Fields that own a column, in source order. */
export function columnFields(fields: readonly Field[]): Field[] {
  return fields.filter((f) => f.column !== null);
}

export function checkConstraint(table: string, field: Field): string | null {
  if (field.type.kind !== 'enum') return null;
  const values = field.type.values.map(quoteLiteral).join(', ');
  return `constraint ${quoteIdent(checkName(table, field.column!))} check (${quoteIdent(field.column!)} in (${values}))`;
}

/**
 * `value` (of SQL type `from`) as SQL type `to`. Text reads every type's
 * output; jsonb, boolean <-> number and date <-> number need their own form.
 */
export function convertSql(value: string, from: string, to: string): string {
  if (from === to) return value;
  if (to === 'jsonb') return `to_jsonb(${value})`;
  if (from === 'jsonb') return `(${value} #>> '{}')::${to}`;
  const special = CONVERSIONS[`${from}->${to}`];
  return special ? special(value) : `(${value})::${to}`;
}

const CONVERSIONS: Record<string, (value: string) => string> = {
  'boolean->double precision': (v) => `(${v})::int::double precision`,
  'double precision->boolean': (v) => `(${v}) <> 0`,
  'timestamptz->double precision': (v) => `extract(epoch from ${v})::double precision`,
  'double precision->timestamptz': (v) => `to_timestamp(${v})`,
};
