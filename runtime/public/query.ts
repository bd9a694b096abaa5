/**
 * The public read query: approved fields of live rows of the global scope
 * (an anonymous caller acts in it, CONTRACT section 8) of the projection table, client filters then fixed filters (which win), ordered by
 * id, `limit` clamped to 1..100 (default 100; garbage is the default).
 */
import { invalidField } from '../http/errors.ts';
import { TenantScope } from '../tenancy/index.ts';
import type { PublicModel } from './plan.ts';
import { quote } from './plan.ts';

/** The projection keeps the global scope's tenant as '' (a key column cannot be null). */
const PROJECTION_GLOBAL = '';

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
    if (!column || typeof value !== 'string') continue;
    // Postgres text cannot hold U+0000: the client's mistake, not a server error.
    if (value.includes('\u0000')) throw invalidField(key, `${key} must not contain NUL characters`);
    out.set(column, value);
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
    const scoped = TenantScope.GLOBAL.sql({ add: () => { throw new Error('the global scope binds nothing'); } }, 'b."tenant_id"');
    sql = `select ${model.select} from ${quote(p.table)} p
      where p."tenant_id" = '${PROJECTION_GLOBAL}' ${where}
        and exists (select 1 from ${quote(p.baseTable)} b
                     where b."id" = p."id" and b."deleted_at" is null and ${scoped})
      order by p."id" limit $${columns.length + 1}`;
    cache.set(key, sql);
  }
  return sql;
}
