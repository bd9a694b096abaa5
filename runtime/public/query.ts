/**
 * The public read query: approved fields of live, null-tenant rows of the
 * projection table, client filters then fixed filters (which win), ordered by
 * id, `limit` clamped to 1..100 (default 100; garbage is the default).
 */
import type { PublicModel } from './plan.ts';
import { quote } from './plan.ts';

export const MAX_LIMIT = 100;

export function clampLimit(raw: unknown): number {
  const text = Array.isArray(raw) ? raw[0] : raw;
  if (typeof text !== 'string' || !/^\s*[-+]?\d{1,12}\s*$/.test(text)) return MAX_LIMIT;
  return Math.min(MAX_LIMIT, Math.max(1, Number(text)));
}

/** Equality filters column -> value: the client's allowed ones, then the fixed ones over them. */
export function filtersOf(model: PublicModel, query: Record<string, unknown>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, raw] of Object.entries(query)) {
    const column = model.filters.get(key);
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (column && typeof value === 'string') out.set(column, value);
  }
  for (const [column, value] of model.fixed) out.set(column, value);
  return out;
}

const sqlCache = new WeakMap<PublicModel, Map<string, string>>();

/** SQL for a set of filter columns ($1..$n their values, $n+1 the limit), built once per shape. */
export function publicSql(model: PublicModel, columns: readonly string[]): string {
  let cache = sqlCache.get(model);
  if (!cache) sqlCache.set(model, (cache = new Map()));
  const key = columns.join('\u0000');
  let sql = cache.get(key);
  if (!sql) {
    const p = model.projection;
    const where = columns.map((column, i) => `and p.${quote(column)} = $${i + 1}`).join(' ');
    // The base-table check makes "never a soft-deleted row" hold even when a refresh was missed.
    sql = `select ${model.select} from ${quote(p.table)} p
      where p."tenant_id" = '' ${where}
        and exists (select 1 from ${quote(p.baseTable)} b
                     where b."id" = p."id" and b."deleted_at" is null and b."tenant_id" is null)
      order by p."id" limit $${columns.length + 1}`;
    cache.set(key, sql);
  }
  return sql;
}
