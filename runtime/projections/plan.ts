/**
 * What each built-in projection holds: from the IR, the columns (`id`,
 * `tenant_id`, every declared field with a column, `created_at`,
 * `updated_at`); from the catalog, the base columns' SQL types, which decide
 * how a value becomes text.
 */
import type { Model, SchemaIR } from '../ir/types.ts';
import { isoUtcSql, type Tx } from '../db/index.ts';
import { compile, sql, type Sql } from '../sql/index.ts';
import { projectionTableName } from './names.ts';
import type { ProjectedColumn, TableProjection } from './types.ts';

type Column = Omit<ProjectedColumn, 'baseType'>;

function modelColumns(model: Model): Column[] {
  const fields = model.fields.flatMap((f) => (f.column ? [{ column: f.column, jsonName: f.inputName, fieldName: f.name }] : []));
  return [
    { column: 'id', jsonName: 'id', fieldName: 'id' },
    { column: 'tenant_id', jsonName: 'tenantId', fieldName: 'tenantId' },
    ...fields,
    { column: 'created_at', jsonName: 'createdAt', fieldName: 'createdAt' },
    { column: 'updated_at', jsonName: 'updatedAt', fieldName: 'updatedAt' },
  ];
}

export interface CatalogColumn {
  readonly table: string;
  readonly column: string;
  readonly type: string;
}

/** Columns of the named tables in the current schema, with their formatted types. */
export async function readCatalog(t: Tx, tables: readonly string[]): Promise<Map<string, Map<string, string>>> {
  const rows = await t.manyOrNone<CatalogColumn>(compile(sql`
     select c.relname as table, a.attname as column, format_type(a.atttypid, a.atttypmod) as type
       from pg_attribute a
       join pg_class c on c.oid = a.attrelid
       join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relname = any(${sql.value(tables, 'text[]')}) and c.relkind in ('r', 'p')
        and a.attnum > 0 and not a.attisdropped`));
  const byTable = new Map<string, Map<string, string>>();
  for (const row of rows) {
    if (!byTable.has(row.table)) byTable.set(row.table, new Map());
    byTable.get(row.table)!.set(row.column, row.type);
  }
  return byTable;
}

export function planProjections(ir: SchemaIR, catalog: Map<string, Map<string, string>>): TableProjection[] {
  return ir.models.map((model) => {
    const base = catalog.get(model.table);
    if (!base) throw new Error(`projection of ${model.name}: table ${model.table} does not exist (are migrations applied?)`);
    const columns = modelColumns(model).map((c) => {
      const baseType = base.get(c.column);
      if (!baseType) throw new Error(`projection of ${model.name}: column ${model.table}.${c.column} does not exist`);
      return { ...c, baseType };
    });
    const table = projectionTableName(model.table);
    return { model: model.name, name: table, table, baseTable: model.table, columns };
  });
}


/**
 * A base value as projection text: SQL NULL is '', timestamps are ISO-8601 in
 * UTC (what JSON clients get), jsonb is its JSON text, numbers and booleans
 * their Postgres text form.
 */
export function textExpression(ref: Sql, baseType: string): Sql {
  if (baseType === 'timestamp with time zone') return sql`coalesce(${sql.raw(isoUtcSql(sql.text(ref)))}, '')`;
  if (baseType === 'timestamp without time zone') return sql`coalesce(to_char(${ref}, 'YYYY-MM-DD"T"HH24:MI:SS.MS'), '')`;
  if (baseType === 'date') return sql`coalesce(to_char(${ref}, 'YYYY-MM-DD'), '')`;
  return sql`coalesce(${ref}::text, '')`;
}

/** `alias.column` (or the bare column without an alias), the column quoted by `sql.ident`. */
export function columnRef(column: string, alias?: string): Sql {
  return alias === undefined ? sql.ident(column) : sql`${sql.alias(alias)}.${sql.ident(column)}`;
}

export function columnList(p: TableProjection, alias?: string): Sql {
  return sql.join(p.columns.map((c) => columnRef(c.column, alias)), ', ');
}

export function textList(p: TableProjection, alias: string): Sql {
  return sql.join(p.columns.map((c) => textExpression(columnRef(c.column, alias), c.baseType)), ', ');
}
