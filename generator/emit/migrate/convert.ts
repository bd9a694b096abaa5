/**
 * Change -> SQL statements. One converter per change kind in a Record, so a
 * kind without a converter fails type-checking; at run time an unknown kind
 * throws rather than dropping SQL.
 */
import { SYSTEM_COLUMNS } from '../../../runtime/ir/types.ts';
import { checkName, foreignKeyName, indexName, quoteIdent, uniqueIndexName } from '../../ir/naming.ts';
import { checkConstraint, columnDefinition, columnFields, createIndex, createUniqueIndex, fieldIndexes, sqlLiteral, sqlType } from '../sql.ts';
import type { Change, ChangeKind, ChangeOf } from './changes.ts';

interface Context {
  /** Table of a model in the new schema (foreign-key targets). */
  readonly tableOf: (model: string) => string;
}

type Converter<K extends ChangeKind> = (change: ChangeOf<K>, ctx: Context) => string[];

const SYSTEM_DEFINITIONS: Record<(typeof SYSTEM_COLUMNS)[number]['column'], string> = {
  id: 'text primary key',
  tenant_id: 'text',
  created_at: 'timestamptz not null default now()',
  updated_at: 'timestamptz not null default now()',
  deleted_at: 'timestamptz',
};

const alter = (table: string) => `alter table ${quoteIdent(table)}`;

const CONVERTERS: { [K in ChangeKind]: Converter<K> } = {
  createTable: ({ model }) => {
    const fields = columnFields(model.fields);
    const lines = [
      ...SYSTEM_COLUMNS.map((c) => `${quoteIdent(c.column)} ${SYSTEM_DEFINITIONS[c.column]}`),
      ...fields.map(columnDefinition),
      ...fields.flatMap((f) => checkConstraint(model.table, f) ?? []),
    ];
    const table = `create table ${quoteIdent(model.table)} (\n${lines.map((l) => `  ${l}`).join(',\n')}\n);`;
    const tenantIndex = `create index ${quoteIdent(indexName(model.table, 'tenant_id'))} on ${quoteIdent(model.table)} ("tenant_id");`;
    return [table, tenantIndex, ...fields.flatMap((f) => fieldIndexes(model.table, f))];
  },
  dropTable: ({ model }) => [`drop table ${quoteIdent(model.table)};`],
  addColumn: ({ table, field }) => {
    const check = checkConstraint(table, field);
    return [`${alter(table)} add column ${columnDefinition(field)};`, ...(check ? [`${alter(table)} add ${check};`] : []), ...fieldIndexes(table, field)];
  },
  dropColumn: ({ table, field }) => [`${alter(table)} drop column ${quoteIdent(field.column!)};`],
  alterType: ({ table, from, field }) => {
    const column = quoteIdent(field.column!);
    const out: string[] = [];
    if (from.type.kind === 'enum') out.push(`${alter(table)} drop constraint if exists ${quoteIdent(checkName(table, field.column!))};`);
    if (from.type.kind === 'belongsTo') out.push(`${alter(table)} drop constraint if exists ${quoteIdent(foreignKeyName(table, field.column!))};`);
    if (from.default !== undefined) out.push(`${alter(table)} alter column ${column} drop default;`);
    const oldType = sqlType(from.type);
    const newType = sqlType(field.type)!;
    if (oldType !== newType) out.push(`${alter(table)} alter column ${column} type ${newType} using ${castExpression(column, oldType, newType)};`);
    if (field.default !== undefined) out.push(`${alter(table)} alter column ${column} set default ${sqlLiteral(field.default)};`);
    const check = checkConstraint(table, field);
    if (check) out.push(`${alter(table)} add ${check};`);
    return out;
  },
  replaceCheck: ({ table, field }) => [
    `${alter(table)} drop constraint if exists ${quoteIdent(checkName(table, field.column!))};`,
    `${alter(table)} add ${checkConstraint(table, field)};`,
  ],
  setRequired: ({ table, field }) => {
    const column = quoteIdent(field.column!);
    const backfill = field.default === undefined ? [] : [`update ${quoteIdent(table)} set ${column} = ${sqlLiteral(field.default)} where ${column} is null;`];
    return [...backfill, `${alter(table)} alter column ${column} set not null;`];
  },
  dropRequired: ({ table, field }) => [`${alter(table)} alter column ${quoteIdent(field.column!)} drop not null;`],
  setDefault: ({ table, field }) => {
    const column = quoteIdent(field.column!);
    const action = field.default === undefined ? 'drop default' : `set default ${sqlLiteral(field.default)}`;
    return [`${alter(table)} alter column ${column} ${action};`];
  },
  addIndex: ({ table, field, unique }) => [unique ? createUniqueIndex(table, field) : createIndex(table, field)],
  dropIndex: ({ table, field, unique }) => {
    const name = unique ? uniqueIndexName(table, field.column!) : indexName(table, field.column!);
    return [`drop index if exists ${quoteIdent(name)};`];
  },
  addForeignKey: ({ table, field }, { tableOf }) => {
    if (field.type.kind !== 'belongsTo') throw new Error(`svc-gen bug: foreign key on ${field.name}, which is not a belongsTo`);
    const target = quoteIdent(tableOf(field.type.model));
    const onDelete = field.required ? 'restrict' : 'set null';
    const name = quoteIdent(foreignKeyName(table, field.column!));
    return [`${alter(table)} add constraint ${name} foreign key (${quoteIdent(field.column!)}) references ${target} ("id") on delete ${onDelete};`];
  },
};

/** SQL for one change; `tables` maps model names to tables of the new schema. */
export function convertChange(change: Change, tables: ReadonlyMap<string, string>): string[] {
  const converter = CONVERTERS[change.kind] as Converter<ChangeKind> | undefined;
  if (!converter) throw new Error(`svc-gen bug: no SQL converter for change ${change.kind}`);
  const tableOf = (model: string) => {
    const table = tables.get(model);
    if (!table) throw new Error(`svc-gen bug: foreign key to unknown model ${model}`);
    return table;
  };
  return converter(change, { tableOf });
}

/** jsonb needs explicit conversions; everything else casts. */
function castExpression(column: string, from: string | null, to: string): string {
  if (to === 'jsonb') return `to_jsonb(${column})`;
  if (from === 'jsonb') return `(${column} #>> '{}')::${to}`;
  return `${column}::${to}`;
}
