/**
 * Queries: one record, a list (limit/offset), a keyset page with totalCount,
 * the trash (soft-deleted rows) and a record's history. Live queries never
 * return soft-deleted rows; every query is scoped to the caller's tenant.
 */
import { tenantSql, type Caller } from './access.ts';
import type { RecordsDeps } from './deps.ts';
import { invalid, notFound } from './errors.ts';
import { loadIncludes, planIncludes, type Row } from './include.ts';
import type { ModelInfo } from './model.ts';
import { afterCursorSql, encodeCursor, orderSql, sortKeys } from './order.ts';
import { Params } from './sql.ts';
import { compileWhere } from './where.ts';

export const LIMITS = { defaultLimit: 100, maxLimit: 1000, defaultFirst: 20, maxFirst: 100 } as const;

export interface ListArgs {
  readonly where?: unknown;
  readonly orderBy?: unknown;
  readonly limit?: number | null;
  readonly offset?: number | null;
  readonly include?: unknown;
}

export interface PageArgs {
  readonly where?: unknown;
  readonly orderBy?: unknown;
  readonly first?: number | null;
  readonly after?: string | null;
  readonly include?: unknown;
  /** Skip the count query when the client did not ask for totalCount. */
  readonly withTotal?: boolean;
}

export interface Page {
  readonly items: Row[];
  readonly totalCount: number | null;
  readonly pageInfo: { readonly hasNextPage: boolean; readonly endCursor: string | null };
}

function bounded(value: number | null | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === null || value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min || value > max) throw invalid(name, `${name} must be an integer from ${min} to ${max}`);
  return value;
}

function scope(info: ModelInfo, caller: Caller, where: unknown, p: Params, deleted: boolean): string {
  const live = deleted ? 't."deleted_at" is not null' : 't."deleted_at" is null';
  return `${live} and ${tenantSql(caller, p)} and ${compileWhere(info, where, p)}`;
}

export async function getRecord(deps: RecordsDeps, caller: Caller, model: unknown, id: string, include?: unknown) {
  const info = deps.model(model, 'read', caller);
  const plans = planIncludes(deps, info, include, caller);
  const p = new Params();
  const text = `select ${info.selectList} from ${info.table} t where t."id" = ${p.add(id, 'text')} and ${scope(info, caller, null, p, false)}`;
  const rows = await deps.rows<Row>(deps.db, { text, values: p.values });
  await loadIncludes(deps, deps.db, rows, plans, caller);
  return rows[0] ?? null;
}

async function list(deps: RecordsDeps, caller: Caller, model: unknown, args: ListArgs, deleted: boolean) {
  const info = deps.model(model, 'read', caller);
  const limit = bounded(args.limit, 'limit', LIMITS.defaultLimit, 1, LIMITS.maxLimit);
  const offset = bounded(args.offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const plans = deleted ? [] : planIncludes(deps, info, args.include, caller);
  const p = new Params();
  const filter = scope(info, caller, args.where, p, deleted);
  const order = orderSql(sortKeys(info, args.orderBy));
  const text = `select ${info.selectList} from ${info.table} t where ${filter} order by ${order}
    limit ${p.add(limit, 'int')} offset ${p.add(offset, 'bigint')}`;
  const rows = await deps.rows<Row>(deps.db, { text, values: p.values });
  await loadIncludes(deps, deps.db, rows, plans, caller);
  return rows;
}

export const listRecords = (deps: RecordsDeps, caller: Caller, model: unknown, args: ListArgs) => list(deps, caller, model, args, false);
export const listDeleted = (deps: RecordsDeps, caller: Caller, model: unknown, args: ListArgs) => list(deps, caller, model, args, true);

export async function pageRecords(deps: RecordsDeps, caller: Caller, model: unknown, args: PageArgs): Promise<Page> {
  const info = deps.model(model, 'read', caller);
  const first = bounded(args.first, 'first', LIMITS.defaultFirst, 1, LIMITS.maxFirst);
  const plans = planIncludes(deps, info, args.include, caller);
  const keys = sortKeys(info, args.orderBy);
  const p = new Params();
  const filter = scope(info, caller, args.where, p, false);
  const countValues = [...p.values];
  const cursor = args.after ? ` and ${afterCursorSql(keys, args.after, p)}` : '';
  const text = `select ${info.selectList} from ${info.table} t where ${filter}${cursor}
    order by ${orderSql(keys)} limit ${p.add(first + 1, 'int')}`;
  const rows = await deps.rows<Row>(deps.db, { text, values: p.values });
  const hasNextPage = rows.length > first;
  const items = hasNextPage ? rows.slice(0, first) : rows;
  let totalCount: number | null = null;
  if (args.withTotal !== false) {
    const count = await deps.rows<{ n: number }>(deps.db, {
      text: `select count(*)::int as n from ${info.table} t where ${filter}`, values: countValues,
    });
    totalCount = count[0].n;
  }
  await loadIncludes(deps, deps.db, items, plans, caller);
  const last = items.at(-1);
  return { items, totalCount, pageInfo: { hasNextPage, endCursor: last ? encodeCursor(keys, last) : null } };
}

/** Events of one record, oldest first. NOT_FOUND when the caller's tenant has none. */
export async function recordHistory(deps: RecordsDeps, caller: Caller, model: unknown, id: string) {
  const info = deps.model(model, 'read', caller);
  const events = await deps.events.history(info.name, id, caller.tenantId);
  if (events.length === 0) throw notFound(info.name, id);
  return events.map((e) => ({
    eventId: e.eventId, eventType: e.eventType, version: e.version, data: e.data, actorId: e.actorId, occurredAt: isoTimestamp(e.occurredAt),
  }));
}

/** Postgres' `2024-05-01 10:00:00.123456+00` as ISO 8601 `2024-05-01T10:00:00.123456+00:00`. */
export function isoTimestamp(text: string): string {
  return text.replace(' ', 'T').replace(/([+-]\d{2})$/, '$1:00');
}
