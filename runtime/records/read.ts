/**
 * Queries: one record, a list (limit/offset), a keyset page with totalCount,
 * the trash (soft-deleted rows) and a record's history. Live queries never
 * return soft-deleted rows; every query is scoped to the caller's tenant.
 */
import type { Caller } from './access.ts';
import type { RecordsDeps } from './deps.ts';
import { invalid, notFound } from './errors.ts';
import { loadIncludes, planIncludes } from './include.ts';
import type { Row } from './row.ts';
import type { ModelInfo } from './model.ts';
import { afterCursorSql, exactCursorColumns, orderSql, sortKeys, takeCursor } from './order.ts';
import { scopedQuery } from './sql.ts';
import { compileWhere } from './where.ts';
import { sql, type Sql } from '../sql/index.ts';
import type { TenantScope } from '../tenancy/index.ts';

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
  /** True when `totalCount` is the planner's estimate (more rows than the exact-count bound match). */
  readonly totalCountIsEstimate: boolean;
  readonly pageInfo: { readonly hasNextPage: boolean; readonly endCursor: string | null };
}

/** CONTRACT section 4: above the maximum is clamped; below the minimum is a VALIDATION_ERROR. */
function bounded(value: number | null | undefined, name: string, fallback: number, min: number, max: number): number {
  if (value === null || value === undefined) return fallback;
  if (!Number.isInteger(value) || value < min) throw invalid(name, `${name} must be an integer of at least ${min}`);
  return Math.min(value, max);
}

const LIVE = sql`t."deleted_at" is null`;
const DELETED = sql`t."deleted_at" is not null`;

function filterSql(deps: RecordsDeps, info: ModelInfo, where: unknown, scope: TenantScope, deleted: boolean): Sql {
  return sql`${deleted ? DELETED : LIVE} and ${scope.predicate()} and ${compileWhere(info, where, deps.limits.where)}`;
}

export async function getRecord(deps: RecordsDeps, caller: Caller, model: unknown, id: string, include?: unknown) {
  const info = deps.model(model, 'read', caller);
  const plans = planIncludes(deps, info, include, caller);
  const statement = sql`select ${info.selectList} from ${info.table} t
    where t."id" = ${sql.value(id, 'text')} and ${filterSql(deps, info, null, caller.scope, false)}`;
  const rows = await deps.rows<Row>(deps.readDb, scopedQuery(caller.scope, statement));
  await loadIncludes(deps, deps.readDb, rows, plans, caller);
  return rows[0] ?? null;
}

async function list(deps: RecordsDeps, caller: Caller, model: unknown, args: ListArgs, deleted: boolean) {
  const info = deps.model(model, 'read', caller);
  const limit = bounded(args.limit, 'limit', LIMITS.defaultLimit, 1, LIMITS.maxLimit);
  const offset = bounded(args.offset, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const plans = deleted ? [] : planIncludes(deps, info, args.include, caller);
  const filter = filterSql(deps, info, args.where, caller.scope, deleted);
  const order = orderSql(sortKeys(info, args.orderBy));
  const statement = sql`select ${info.selectList} from ${info.table} t where ${filter} order by ${order}
    limit ${sql.value(limit, 'int')} offset ${sql.value(offset, 'bigint')}`;
  const rows = await deps.rows<Row>(deps.readDb, scopedQuery(caller.scope, statement));
  await loadIncludes(deps, deps.readDb, rows, plans, caller);
  return rows;
}

export const listRecords = (deps: RecordsDeps, caller: Caller, model: unknown, args: ListArgs) => list(deps, caller, model, args, false);
export const listDeleted = (deps: RecordsDeps, caller: Caller, model: unknown, args: ListArgs) => list(deps, caller, model, args, true);

export async function pageRecords(deps: RecordsDeps, caller: Caller, model: unknown, args: PageArgs): Promise<Page> {
  const info = deps.model(model, 'read', caller);
  const first = bounded(args.first, 'first', LIMITS.defaultFirst, 1, LIMITS.maxFirst);
  const plans = planIncludes(deps, info, args.include, caller);
  const keys = sortKeys(info, args.orderBy);
  const filter = filterSql(deps, info, args.where, caller.scope, false);
  const cursor = args.after ? sql` and ${afterCursorSql(keys, args.after)}` : sql.empty;
  const statement = sql`select ${info.selectList}${exactCursorColumns(keys)} from ${info.table} t where ${filter}${cursor}
    order by ${orderSql(keys)} limit ${sql.value(first + 1, 'int')}`;
  const rows = await deps.rows<Row>(deps.readDb, scopedQuery(caller.scope, statement));
  const hasNextPage = rows.length > first;
  const items = hasNextPage ? rows.slice(0, first) : rows;
  const total = args.withTotal === false ? null : await countRows(deps, caller.scope, info, filter);
  const endCursor = takeCursor(keys, rows, items.at(-1));
  await loadIncludes(deps, deps.readDb, items, plans, caller);
  return {
    items, totalCount: total?.count ?? null, totalCountIsEstimate: total?.estimate ?? false, pageInfo: { hasNextPage, endCursor },
  };
}

/** GraphQL's Int: an estimate never leaves its range. */
const MAX_INT = 2_147_483_647;

interface PlanRow {
  readonly 'QUERY PLAN': ReadonlyArray<{ readonly Plan: { readonly 'Plan Rows': number } }>;
}

/**
 * `totalCount` (ADR 022): exact while at most `exactCount` rows match, read
 * through a `limit` so the count stops there whatever the table holds; above
 * it, the planner's estimate for the same filtered statement (the scope and
 * every condition of `where` weigh in), never below the bound it passed.
 *
 * The bounded read is ordered by the primary key `(tenant_id, id)`, which the
 * count does not need: it keeps the planner off `Seq Scan ... Limit`, whose
 * cost depends on where in the table the scan begins. For a tenant holding a
 * large share of a big table that plan looks cheapest, but a sequential scan
 * starts where the last one on the table stopped (`synchronize_seqscans`), so
 * now and then it begins past the tenant's rows and reads the whole table
 * (ADR 022, "The bounded count's order"). With the order, the choice is the
 * key's range of the tenant or another index and a sort of what it matched:
 * either costs what the tenant holds, never what the table holds.
 */
async function countRows(deps: RecordsDeps, scope: TenantScope, info: ModelInfo, filter: Sql) {
  const bound = deps.limits.exactCount;
  const [{ n }] = await deps.rows<{ n: number }>(deps.readDb, scopedQuery(scope, sql`
    select count(*)::int as n from (select 1 from ${info.table} t where ${filter}
      order by t."tenant_id", t."id" limit ${sql.value(bound + 1, 'int')}) s`));
  if (n <= bound) return { count: n, estimate: false };
  const [plan] = await deps.rows<PlanRow>(deps.readDb, scopedQuery(scope, sql`
    explain (format json) select 1 from ${info.table} t where ${filter}`));
  const planned = Math.round(plan['QUERY PLAN'][0].Plan['Plan Rows']);
  return { count: Math.min(MAX_INT, Math.max(bound + 1, planned)), estimate: true };
}

/** Events of one record, oldest first. NOT_FOUND when the caller's tenant has none. */
export async function recordHistory(deps: RecordsDeps, caller: Caller, model: unknown, id: string) {
  const info = deps.model(model, 'read', caller);
  const events = await deps.events.history(info.name, id, caller.scope);
  if (events.length === 0) throw notFound(info.name, id);
  return events.map((e) => ({
    eventId: e.eventId, eventType: e.eventType, version: e.version, data: e.data, actorId: e.actorId, occurredAt: e.occurredAt,
  }));
}
