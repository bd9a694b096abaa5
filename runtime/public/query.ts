/**
 * The public read query: approved fields of live rows of the global scope
 * (an anonymous caller acts in it, CONTRACT section 8) of the projection table, client filters then fixed filters (which win), ordered by
 * id, `limit` clamped to 1..100 (default 100; garbage is the default).
 */
import { invalidField } from '../http/errors.ts';
import { GLOBAL_TENANT, TenantScope } from '../tenancy/index.ts';
import type { PublicModel } from './plan.ts';
import { compile, sql, type Query } from '../sql/index.ts';

/** The projection and its base table keep the global scope's tenant as '' (ADR 025 decision 2). */
const PROJECTION_GLOBAL = GLOBAL_TENANT;

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

/** A statement of one filter shape: its text, and what each placeholder binds, in placeholder order. */
interface Shape {
  readonly text: string;
  /** A filter column's slot, LIMIT, or a constant of the statement (the global scope's tenant). */
  readonly slots: readonly unknown[];
}

const LIMIT = Symbol('limit');

/** The placeholder of a filter column's value. */
class FilterSlot {
  constructor(readonly column: string) {}
}
const shapes = new WeakMap<PublicModel, Map<string, Shape>>();

/**
 * The read for `filters` (column -> value) and `limit`. The statement of a
 * filter shape is built and compiled once: its values are slots (a column, or
 * the limit) that each request fills in placeholder order.
 */
export function publicQuery(model: PublicModel, filters: ReadonlyMap<string, string>, limit: number): Query {
  const columns = [...filters.keys()].sort();
  let cache = shapes.get(model);
  if (!cache) shapes.set(model, (cache = new Map()));
  const key = columns.join('\u0000');
  let shape = cache.get(key);
  if (!shape) cache.set(key, (shape = shapeOf(model, columns)));
  return {
    text: shape.text,
    values: shape.slots.map((slot) => (slot === LIMIT ? limit : slot instanceof FilterSlot ? filters.get(slot.column) : slot)),
  };
}

function shapeOf(model: PublicModel, columns: readonly string[]): Shape {
  const p = model.projection;
  const where = columns.map((column) => sql`and p.${sql.ident(column)} = ${sql.value(new FilterSlot(column), 'text')}`);
  // The base-table check makes "never a soft-deleted row" hold even when a refresh was missed.
  // `offset 0` keeps it a check of each row the projection's index yields, in order, until the
  // limit: as a semi-join, the planner multiplied "the base row is in the scope" by "the ids are
  // equal", expected a handful of matches among the scope's rows, and joined all of them and
  // sorted them instead (O(rows of the scope): 7.2x at 2M rows in bench:scale; ADR 021).
  const statement = sql`select ${model.select} from ${sql.ident(p.table)} p
      where p."tenant_id" = ${sql.raw(`'${PROJECTION_GLOBAL}'`)} ${sql.join(where, ' ')}
        and exists (select 1 from ${sql.ident(p.baseTable)} b
                     where b."tenant_id" = p."tenant_id" and b."id" = p."id" and b."deleted_at" is null and ${TenantScope.GLOBAL.predicate('b')} offset 0)
      order by p."id" limit ${sql.value(LIMIT, 'int')}`;
  const { text, values } = compile(statement, { scope: TenantScope.GLOBAL });
  return { text, slots: values };
}
