/**
 * Reading entries: one filtered, keyset-paged statement per page (newest
 * first by id), and statistics in one statement (one snapshot). Every query
 * is rendered inside the caller's tenant scope; every filter is part of the
 * statement that returns the rows.
 */
import { isoUtcSql, type Db } from '../db/index.ts';
import { compile, sql, type Sql } from '../sql/index.ts';
import { tenantOf, type TenantScope } from '../tenancy/index.ts';
import type { AuditEntry } from './types.ts';

export interface AuditFilter {
  readonly entityType?: string;
  readonly entityId?: string;
  readonly actorId?: string;
  readonly action?: string;
  readonly outcome?: string;
  readonly from?: Date;
  readonly to?: Date;
}

export interface PageRequest {
  readonly limit: number;
  /** Entries with an id below this one (the previous page's last). */
  readonly before?: bigint;
}

export interface AuditPage {
  readonly items: AuditEntry[];
  readonly nextCursor: string | null;
}

const COLUMN: Record<keyof Omit<AuditFilter, 'from' | 'to'>, Sql> = {
  entityType: sql`a.entity_type`, entityId: sql`a.entity_id`, actorId: sql`a.actor_id`, action: sql`a.action`, outcome: sql`a.outcome`,
};

function conditions(scope: TenantScope, filter: AuditFilter): Sql[] {
  const where = [scope.predicate('a')];
  for (const key of Object.keys(COLUMN) as Array<keyof typeof COLUMN>) {
    const value = filter[key];
    if (value !== undefined) where.push(sql`${COLUMN[key]} = ${sql.value(value, 'text')}`);
  }
  if (filter.from) where.push(sql`a.occurred_at >= ${sql.value(filter.from.toISOString(), 'timestamptz')}`);
  if (filter.to) where.push(sql`a.occurred_at < ${sql.value(filter.to.toISOString(), 'timestamptz')}`);
  return where;
}

/** Every audit read is in its caller's scope: compiled only when it rendered it. */
const scoped = (scope: TenantScope, statement: Sql) => compile(statement, { scope });


const OCCURRED_AT = sql.raw(isoUtcSql('a.occurred_at'));
/** An actor's last entry as the API's ISO timestamp. */
export const LAST_AT = sql.raw(isoUtcSql('last_at'));

export async function pageEntries(db: Db, scope: TenantScope, filter: AuditFilter, page: PageRequest): Promise<AuditPage> {
  const where = conditions(scope, filter);
  if (page.before !== undefined) where.push(sql`a.id < ${sql.value(page.before.toString(), 'bigint')}`);
  // The page's ids first, then its rows by primary key (ADR 022): selecting ids only, the
  // filter's index (`tenant_id, action, id`, ...) is an index-only walk that the planner
  // prices right; selecting every column, it walked the primary key backwards through
  // every tenant's entries when it misjudged how soon matches come (a filter matching none).
  const rows = await db.manyOrNone(scoped(scope, sql`
    select a.id::text as id, ${OCCURRED_AT} as occurred_at, a.tenant_id, a.actor_kind, a.actor_id, a.actor_role,
           a.action, a.entity_type, a.entity_id, a.event_id, a.outcome, a.changes, a.ip, a.user_agent, a.request_id
      from svc_audit a
     where ${scope.predicate('a')} and a.id = any(array(select a.id from svc_audit a where ${sql.join(where, ' and ')}
                             order by a.id desc limit ${sql.value(page.limit + 1, 'int')}))
     order by a.id desc`));
  const items = rows.slice(0, page.limit).map(toEntry);
  const more = rows.length > page.limit;
  return { items, nextCursor: more ? encodeCursor(BigInt(items[items.length - 1].id)) : null };
}

function toEntry(row: Record<string, any>): AuditEntry {
  return {
    id: row.id,
    occurredAt: row.occurred_at,
    tenantId: tenantOf(row.tenant_id),
    actor: { kind: row.actor_kind, id: row.actor_id, role: row.actor_role },
    action: row.action,
    entityType: row.entity_type,
    entityId: row.entity_id,
    eventId: row.event_id,
    outcome: row.outcome,
    changes: row.changes,
    ip: row.ip,
    userAgent: row.user_agent,
    requestId: row.request_id,
  };
}

export interface AuditStatistics {
  readonly total: number;
  readonly byAction: Record<string, number>;
  readonly byOutcome: Record<string, number>;
  readonly byEntityType: Array<{ entityType: string; count: number }>;
  readonly topActors: Array<{ actorId: string; count: number; lastAt: string }>;
  readonly range: { from: string; to: string };
}

/** Actors a statistics answer names, the busiest first. */
export const TOP_ACTORS = 10;

/**
 * Every figure from one statement: one snapshot, so the parts add up. The
 * range is bounded (routes.ts), and svc_audit_tenant_time (tenant_id,
 * occurred_at) reads the scope's entries of the range and no others.
 */
export async function statistics(db: Db, scope: TenantScope, range: { from: Date; to: Date }): Promise<AuditStatistics> {
  const where = sql.join(conditions(scope, range), ' and ');
  const row = await db.one(scoped(scope, sql`
     with e as materialized (select a.action, a.outcome, a.entity_type, a.actor_id, a.occurred_at from svc_audit a where ${where})
     select (select count(*)::int from e) as total,
            (select coalesce(jsonb_object_agg(action, n), '{}') from (select action, count(*)::int n from e group by action) x) as by_action,
            (select coalesce(jsonb_object_agg(outcome, n), '{}') from (select outcome, count(*)::int n from e group by outcome) x) as by_outcome,
            (select coalesce(jsonb_agg(jsonb_build_object('entityType', entity_type, 'count', n) order by n desc, entity_type), '[]')
               from (select entity_type, count(*)::int n from e where entity_type is not null group by entity_type) x) as by_entity_type,
            (select coalesce(jsonb_agg(jsonb_build_object('actorId', actor_id, 'count', n, 'lastAt', ${LAST_AT}) order by n desc, actor_id), '[]')
               from (select actor_id, count(*)::int n, max(occurred_at) last_at from e where actor_id is not null
                      group by actor_id order by n desc, actor_id limit ${sql.value(TOP_ACTORS, 'int')}) x) as top_actors`));
  return toStatistics(row, range);
}

/** A statistics row (direct count or rollups, statistics.ts) as the API answers it. */
export function toStatistics(row: { total: number; by_action: AuditStatistics['byAction']; by_outcome: AuditStatistics['byOutcome'];
  by_entity_type: AuditStatistics['byEntityType']; top_actors: AuditStatistics['topActors'] }, range: { from: Date; to: Date }): AuditStatistics {
  return {
    total: row.total,
    byAction: row.by_action,
    byOutcome: row.by_outcome,
    byEntityType: row.by_entity_type,
    topActors: row.top_actors,
    range: { from: range.from.toISOString(), to: range.to.toISOString() },
  };
}

const CURSOR_PREFIX = 'a1:';

export function encodeCursor(id: bigint): string {
  return Buffer.from(CURSOR_PREFIX + id.toString()).toString('base64url');
}

/** The id a cursor stands for; null when it is not one of ours. */
export function decodeCursor(cursor: string): bigint | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!text.startsWith(CURSOR_PREFIX) || !/^\d{1,19}$/.test(text.slice(CURSOR_PREFIX.length))) return null;
  return BigInt(text.slice(CURSOR_PREFIX.length));
}
