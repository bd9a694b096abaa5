/**
 * Startup DDL of the built-in projection tables: create a missing table, add
 * missing columns as nullable text, keep existing and extra columns. A column
 * the projection needs that is not text (or an `id` without a unique index)
 * stops the start with CURRENT_PROJECTION_SCHEMA_CONFLICT.
 */
import type { Tx } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import { tenantIndexSql } from './indexes.ts';
import type { TableProjection } from './types.ts';

export const SCHEMA_CONFLICT = 'CURRENT_PROJECTION_SCHEMA_CONFLICT';

export class ProjectionSchemaConflictError extends Error {
  readonly code = SCHEMA_CONFLICT;
  constructor(problem: string) {
    super(`${SCHEMA_CONFLICT}: ${problem}`);
    this.name = 'ProjectionSchemaConflictError';
  }
}

const TEXT_TYPES = /^(text|character varying(\(\d+\))?)$/;

/** Aligns the tables; returns the names of those it created or added a column to (their rows must be built). */
export async function ensureTables(
  t: Tx, projections: readonly TableProjection[], existing: Map<string, Map<string, string>>,
): Promise<Set<string>> {
  const present = projections.filter((p) => existing.has(p.table));
  const unique = await tablesWithUniqueId(t, present.map((p) => p.table));
  const changed = new Set<string>();
  for (const p of projections) {
    const columns = existing.get(p.table);
    if (!columns) await createTable(t, p);
    if (!columns || await alignTable(t, p, columns, unique.has(p.table))) changed.add(p.name);
  }
  return changed;
}

async function createTable(t: Tx, p: TableProjection): Promise<void> {
  const lines = p.columns.map((c) => sql`${sql.ident(c.column)} text${c.column === 'id' ? sql` primary key` : sql.empty}`);
  await t.none(sql.text(sql`create table if not exists ${sql.ident(p.table)} (${sql.join(lines, ', ')})`));
  await t.none(sql.text(tenantIndexSql(p, false))); // an empty table: no need for `concurrently`
}

/** True when a column was added. */
async function alignTable(t: Tx, p: TableProjection, columns: Map<string, string>, idIsUnique: boolean): Promise<boolean> {
  let added = false;
  for (const c of p.columns) {
    const type = columns.get(c.column);
    if (type === undefined) {
      await t.none(sql.text(sql`alter table ${sql.ident(p.table)} add column if not exists ${sql.ident(c.column)} text`));
      added = true;
    } else if (!TEXT_TYPES.test(type)) {
      throw new ProjectionSchemaConflictError(
        `column ${p.table}.${c.column} is ${type}; projection columns are text (convert or drop the column)`,
      );
    }
  }
  if (!idIsUnique) throw new ProjectionSchemaConflictError(`${p.table}.id has no primary key or unique index`);
  return added;
}

/** Of `tables` (in the current schema), those whose `id` has a primary key or a unique index of its own: one query for all. */
async function tablesWithUniqueId(t: Tx, tables: readonly string[]): Promise<Set<string>> {
  if (tables.length === 0) return new Set();
  const rows = await t.manyOrNone<{ table: string }>(compile(sql`
     select distinct c.relname as table
       from pg_index i
       join pg_class c on c.oid = i.indrelid
       join pg_namespace n on n.oid = c.relnamespace
       join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
      where n.nspname = current_schema() and c.relname = any(${sql.value(tables, 'text[]')})
        and i.indisunique and i.indnatts = 1 and i.indpred is null and a.attname = 'id'`));
  return new Set(rows.map((r) => r.table));
}
