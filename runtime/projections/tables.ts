/**
 * Startup DDL of the built-in projection tables: create a missing table, add
 * missing columns as nullable text, keep existing and extra columns. A column
 * the projection needs that is not text (or a table keyed neither by
 * `(tenant_id, id)` nor by `id`) stops the start with
 * CURRENT_PROJECTION_SCHEMA_CONFLICT. A new table is keyed by
 * `(tenant_id, id)`, NOT NULL (layout 3, ADR 025: co-located with its base
 * table on Citus); a table of layout 2 keyed by `id` alone keeps working.
 
 */
import type { Tx } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import { indexBuildRunning } from './indexes.ts';
import type { TableProjection } from './types.ts';

export const SCHEMA_CONFLICT = 'CURRENT_PROJECTION_SCHEMA_CONFLICT';

export class ProjectionSchemaConflictError extends Error {
  readonly code = SCHEMA_CONFLICT;
  constructor(problem: string) {
    super(`${SCHEMA_CONFLICT}: ${problem}`);
    this.name = 'ProjectionSchemaConflictError';
  }
}

/**
 * Thrown by the start's DDL when another session builds a projection index:
 * altering a table it may be indexing, in a transaction older than the build,
 * would deadlock with it. The caller ends the transaction and tries again.
 */
export class IndexBuildRunningError extends Error {
  constructor() {
    super('another instance is building a projection index');
    this.name = 'IndexBuildRunningError';
  }
}

const TEXT_TYPES = /^(text|character varying(\(\d+\))?)$/;

/**
 * Aligns the tables; returns the names of those it created or added a column
 * to (their rows must be built), and the projections with their key as found.
 */
export async function ensureTables(
  t: Tx, projections: readonly TableProjection[], existing: Map<string, Map<string, string>>,
): Promise<{ changed: Set<string>; tables: TableProjection[] }> {
  const present = projections.filter((p) => existing.has(p.table));
  const keys = await tableKeys(t, present.map((p) => p.table));
  const changed = new Set<string>();
  const tables: TableProjection[] = [];
  for (const p of projections) {
    const columns = existing.get(p.table);
    if (!columns) await createTable(t, p);
    if (!columns || await alignTable(t, p, columns, keys.has(p.table))) changed.add(p.name);
    tables.push({ ...p, keyedByTenant: !columns || keys.get(p.table) === 'tenant' });
  }
  return { changed, tables };
}

async function createTable(t: Tx, p: TableProjection): Promise<void> {
  const lines = p.columns.map((c) => sql`${sql.ident(c.column)} text${c.column === 'id' || c.column === 'tenant_id' ? sql` not null` : sql.empty}`);
  await t.none(sql.text(sql`create table if not exists ${sql.ident(p.table)} (${sql.join(lines, ', ')}, primary key ("tenant_id", "id"))`));
}

/** True when a column was added. */
async function alignTable(t: Tx, p: TableProjection, columns: Map<string, string>, keyed: boolean): Promise<boolean> {
  let added = false;
  for (const c of p.columns) {
    const type = columns.get(c.column);
    if (type === undefined) {
      if (!added && await indexBuildRunning(t)) throw new IndexBuildRunningError();
      await t.none(sql.text(sql`alter table ${sql.ident(p.table)} add column if not exists ${sql.ident(c.column)} text`));
      added = true;
    } else if (!TEXT_TYPES.test(type)) {
      throw new ProjectionSchemaConflictError(
        `column ${p.table}.${c.column} is ${type}; projection columns are text (convert or drop the column)`,
      );
    }
  }
  if (!keyed) throw new ProjectionSchemaConflictError(`${p.table} has no primary key or unique index on (tenant_id, id) or on id`);
  return added;
}

/**
 * Of `tables` (in the current schema), the key of each that has one: `tenant`
 * for a primary key or unique index on exactly `(tenant_id, id)`, else `id`
 * for one on `id` alone. One query for all.
 */
async function tableKeys(t: Tx, tables: readonly string[]): Promise<Map<string, 'tenant' | 'id'>> {
  if (tables.length === 0) return new Map();
  const rows = await t.manyOrNone<{ table: string; tenant: boolean }>(compile(sql`
     select c.relname as table, bool_or(i.indnatts = 2) as tenant
       from pg_index i
       join pg_class c on c.oid = i.indrelid
       join pg_namespace n on n.oid = c.relnamespace
       join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
       left join pg_attribute b on b.attrelid = i.indrelid and i.indnatts = 2 and b.attnum = i.indkey[1]
      where n.nspname = current_schema() and c.relname = any(${sql.value(tables, 'text[]')})
        and i.indisunique and i.indisvalid and i.indpred is null and i.indexprs is null
        and ((i.indnatts = 1 and a.attname = 'id') or (i.indnatts = 2 and a.attname = 'tenant_id' and b.attname = 'id'))
      group by c.relname`));
  return new Map(rows.map((r) => [r.table, r.tenant ? 'tenant' : 'id']));
}
