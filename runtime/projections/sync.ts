/**
 * Set-based copy from base tables into projection tables. Used by the
 * startup synchronisation (all rows) and by live refreshes (a set of ids, in
 * the durable consumer's transaction: refresher.ts);
 * never reads the event log, so it works with history `off`.
 */
import type { Db, Tx } from '../db/index.ts';
import { q } from './names.ts';
import { columnList, textList } from './plan.ts';
import type { TableProjection } from './types.ts';

/** Upserts active base rows (all, or `id = any($1)`), writing only rows that differ. */
function upsertSql(p: TableProjection, byIds: boolean): string {
  const assigned = p.columns.filter((c) => c.column !== 'id');
  const set = assigned.map((c) => `${q(c.column)} = excluded.${q(c.column)}`).join(', ');
  const current = assigned.map((c) => `p.${q(c.column)}`).join(', ');
  const incoming = assigned.map((c) => `excluded.${q(c.column)}`).join(', ');
  return `insert into ${q(p.table)} as p (${columnList(p)})
    select ${textList(p, 'b')} from ${q(p.baseTable)} b
     where b."deleted_at" is null ${byIds ? 'and b."id" = any($1)' : ''}
    on conflict ("id") do update set ${set}
    where (${current}) is distinct from (${incoming})`;
}

/** Removes projection rows whose base record is absent or soft-deleted. */
function deleteSql(p: TableProjection, byIds: boolean): string {
  return `delete from ${q(p.table)} p
    where ${byIds ? 'p."id" = any($1) and' : ''} not exists (
      select 1 from ${q(p.baseTable)} b where b."id" = p."id" and b."deleted_at" is null)`;
}

/** Every projection's delete and upsert, sent as one multi-statement text: one round trip, not two per model. */
export async function syncAll(t: Tx, projections: readonly TableProjection[]): Promise<void> {
  if (projections.length === 0) return;
  await t.none(projections.map((p) => `${deleteSql(p, false)};\n${upsertSql(p, false)}`).join(';\n'));
}

/** One statement per refresh: the delete and the upsert touch disjoint ids. */
export function refreshSql(p: TableProjection): string {
  return `with gone as (${deleteSql(p, true)}) ${upsertSql(p, true)}`;
}

/** Rows that differ between base and projection (either side), for diagnostics. */
export async function countDrift(db: Db | Tx, p: TableProjection): Promise<{ rows: number; drift: number }> {
  return db.one(
    `with src as (select ${textList(p, 'b')} from ${q(p.baseTable)} b where b."deleted_at" is null),
          dst as (select ${columnList(p, 'p.')} from ${q(p.table)} p)
     select (select count(*)::int from dst) as rows,
            (select count(*)::int from (select * from src except select * from dst) a)
          + (select count(*)::int from (select * from dst except select * from src) b) as drift`,
  );
}
