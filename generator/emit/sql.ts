/**
 * SQL fragments shared by migrations and projections. Every identifier is
 * quoted (a field called `order` or `user` must work); SQL is lower-case.
 */
import type { Field, FieldKind, FieldType, Literal, Scalar } from '../../runtime/ir/types.ts';
import { checkName, indexName, quoteIdent, quoteLiteral, uniqueIndexName } from '../ir/naming.ts';

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
 * A plain index: every belongsTo and Media column (DELETE /media/{id} looks up
 * the records holding an id), and `@index` unless `@unique` already indexes it.
 */
export function wantsIndex(field: Field): boolean {
  const reference = field.type.kind === 'belongsTo' || field.type.kind === 'media';
  return field.column !== null && (reference || (field.index && !field.unique));
}

export function createIndex(table: string, field: Field): string {
  return `create index ${quoteIdent(indexName(table, field.column!))} on ${quoteIdent(table)} (${quoteIdent(field.column!)});`;
}

/** Unique among the live rows of a tenant; a null tenant counts as one tenant. */
export function createUniqueIndex(table: string, field: Field): string {
  const name = quoteIdent(uniqueIndexName(table, field.column!));
  return `create unique index ${name} on ${quoteIdent(table)} (coalesce("tenant_id", ''), ${quoteIdent(field.column!)}) where "deleted_at" is null;`;
}

/** Indexes a new column needs, in a fixed order. */
export function fieldIndexes(table: string, field: Field): string[] {
  return [...(wantsIndex(field) ? [createIndex(table, field)] : []), ...(field.unique ? [createUniqueIndex(table, field)] : [])];
}
