/**
 * Set-based copy from base tables into projection tables, for a set of ids:
 * used by live refreshes (in the durable consumer's transaction: refresher.ts)
 * and by builds (a batch of ids at a time: build.ts). Never reads the event
 * log, so it works with history `off`.
 */
import type { Db, Tx } from '../db/index.ts';
import { compile, sql, type Sql, type SqlValue } from '../sql/index.ts';
import { columnList, columnRef, textList } from './plan.ts';
import type { TableProjection } from './types.ts';

/**
 * The rows `(tenant_id, id)` of `keys`: two `text[]` values of one length, the
 * stored tenants (`''` for the global scope) and the ids. Base and projection
 * are matched on both columns, their key in layout 3 (ADR 025): co-located on
 * Citus, and a primary-key probe on one node.
 */
export interface RowKeys {
  readonly tenants: SqlValue;
  readonly ids: SqlValue;
}

const keyed = (alias: string, keys: RowKeys) =>
  sql`(${sql.alias(alias)}."tenant_id", ${sql.alias(alias)}."id") in (select * from unnest(${keys.tenants}, ${keys.ids}))`;

/** The conflict target of the upsert: the table's key (ADR 025; `id` alone on a table of layout 2). */
const conflictTarget = (p: TableProjection) => (p.keyedByTenant ? sql`("tenant_id", "id")` : sql`("id")`);

/** Upserts the active base rows among `keys`, writing only rows that differ. */
function upsertSql(p: TableProjection, keys: RowKeys): Sql {
  const assigned = p.columns.filter((c) => c.column !== 'id' && !(p.keyedByTenant && c.column === 'tenant_id'));
  const set = sql.join(assigned.map((c) => sql`${sql.ident(c.column)} = ${columnRef(c.column, 'excluded')}`), ', ');
  const current = sql.join(assigned.map((c) => columnRef(c.column, 'p')), ', ');
  const incoming = sql.join(assigned.map((c) => columnRef(c.column, 'excluded')), ', ');
  return sql`insert into ${sql.ident(p.table)} as p (${columnList(p)})
    select ${textList(p, 'b')} from ${sql.ident(p.baseTable)} b
     where b."deleted_at" is null and ${keyed('b', keys)}
    on conflict ${conflictTarget(p)} do update set ${set}
    where (${current}) is distinct from (${incoming})`;
}

/** Removes the projection rows among `keys` whose base record is absent or soft-deleted. */
export function deleteSql(p: TableProjection, keys: RowKeys): Sql {
  return sql`delete from ${sql.ident(p.table)} p
    where ${keyed('p', keys)} and not exists (
      select 1 from ${sql.ident(p.baseTable)} b where b."tenant_id" = p."tenant_id" and b."id" = p."id" and b."deleted_at" is null)`;
}

/** One statement per refresh: the delete and the upsert touch disjoint rows; `keys` are the values of both. */
export function refreshSql(p: TableProjection, keys: RowKeys): Sql {
  return sql`with gone as (${deleteSql(p, keys)}) ${upsertSql(p, keys)}`;
}

/**
 * A bounded comparison for diagnostics: the newest `limit` base records (ids
 * are ULIDs, so the highest ids) against the projection rows of the same id
 * range, both ways. Two primary-key range scans, never the whole table.
 */
export async function checkNewest(db: Db | Tx, p: TableProjection, limit: number): Promise<{ checked: number; drift: number }> {
  return db.one(compile(sql`
    with newest as (select b."id" from ${sql.ident(p.baseTable)} b order by b."id" desc limit ${sql.value(limit, 'int')}),
         bound as (select coalesce(min("id"), '') as low, count(*)::int as checked from newest),
         src as (select ${textList(p, 'b')} from ${sql.ident(p.baseTable)} b, bound where b."id" >= bound.low and b."deleted_at" is null),
         dst as (select ${columnList(p, 'p')} from ${sql.ident(p.table)} p, bound where p."id" >= bound.low)
    select (select checked from bound) as checked,
           (select count(*)::int from (select * from src except select * from dst) a)
         + (select count(*)::int from (select * from dst except select * from src) b) as drift`));
}
