/**
 * Set-based copy from base tables into projection tables. Used by the
 * startup synchronisation (all rows) and by live refreshes (a set of ids, in
 * the durable consumer's transaction: refresher.ts);
 * never reads the event log, so it works with history `off`.
 */
import type { Db, Tx } from '../db/index.ts';
import { compile, sql, type Sql, type SqlValue } from '../sql/index.ts';
import { columnList, columnRef, textList } from './plan.ts';
import type { TableProjection } from './types.ts';

/** Upserts active base rows (all, or those whose id is one of `ids`, a `text[]` value), writing only rows that differ. */
function upsertSql(p: TableProjection, ids: SqlValue | null): Sql {
  const assigned = p.columns.filter((c) => c.column !== 'id');
  const set = sql.join(assigned.map((c) => sql`${sql.ident(c.column)} = ${columnRef(c.column, 'excluded')}`), ', ');
  const current = sql.join(assigned.map((c) => columnRef(c.column, 'p')), ', ');
  const incoming = sql.join(assigned.map((c) => columnRef(c.column, 'excluded')), ', ');
  return sql`insert into ${sql.ident(p.table)} as p (${columnList(p)})
    select ${textList(p, 'b')} from ${sql.ident(p.baseTable)} b
     where b."deleted_at" is null ${ids ? sql`and b."id" = any(${ids})` : sql.empty}
    on conflict ("id") do update set ${set}
    where (${current}) is distinct from (${incoming})`;
}

/** Removes projection rows whose base record is absent or soft-deleted (all, or those whose id is one of `ids`). */
function deleteSql(p: TableProjection, ids: SqlValue | null): Sql {
  return sql`delete from ${sql.ident(p.table)} p
    where ${ids ? sql`p."id" = any(${ids}) and` : sql.empty} not exists (
      select 1 from ${sql.ident(p.baseTable)} b where b."id" = p."id" and b."deleted_at" is null)`;
}

/** Every projection's delete and upsert, sent as one multi-statement text (no values): one round trip, not two per model. */
export async function syncAll(t: Tx, projections: readonly TableProjection[]): Promise<void> {
  if (projections.length === 0) return;
  const statements = projections.map((p) => sql`${deleteSql(p, null)};\n${upsertSql(p, null)}`);
  await t.none(sql.text(sql.join(statements, ';\n')));
}

/** One statement per refresh: the delete and the upsert touch disjoint ids; `ids` is the `text[]` value of both. */
export function refreshSql(p: TableProjection, ids: SqlValue): Sql {
  return sql`with gone as (${deleteSql(p, ids)}) ${upsertSql(p, ids)}`;
}

/** Rows that differ between base and projection (either side), for diagnostics. */
export async function countDrift(db: Db | Tx, p: TableProjection): Promise<{ rows: number; drift: number }> {
  return db.one(compile(sql`
    with src as (select ${textList(p, 'b')} from ${sql.ident(p.baseTable)} b where b."deleted_at" is null),
          dst as (select ${columnList(p, 'p')} from ${sql.ident(p.table)} p)
     select (select count(*)::int from dst) as rows,
            (select count(*)::int from (select * from src except select * from dst) a)
          + (select count(*)::int from (select * from dst except select * from src) b) as drift`));
}
