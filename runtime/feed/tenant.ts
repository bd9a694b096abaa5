/**
 * The per-tenant feed (ADR 025 decision 4), read in tenant mode: each
 * tenant's changes in `tenant_seq` order (gapless and in commit order, the
 * head row of svc_tenant_heads being held by each appending transaction to
 * its commit: runtime/events/tenant-seq.ts). What is committed in a tenant
 * is always a prefix 1..m of its positions, so a page after `n` never skips.
 *
 * A position is `(tenant, tenant_seq)`; a reader or consumer keeps one per
 * tenant. Which tenants to read: the heads whose `last_seq` lies beyond the
 * reader's own position there.
 */
import { fixed, type Db, type Tx } from '../db/index.ts';
import { compile, sql, type Sql } from '../sql/index.ts';
import { TenantScope } from '../tenancy/index.ts';
import { tenantKey, tenantOfKey } from '../events/index.ts';
import type { FeedChange, FeedFilter } from './read.ts';

/** Every change of `tenant` (its head key: `''` is the global scope) at or before `seq` has been read. */
export interface TenantPosition {
  readonly tenant: string;
  readonly seq: number;
}

/** Tenants whose head lies beyond `known` (tenants absent from it: beyond 0), with their heads. */
export async function headsBeyond(runner: Db | Tx, known: ReadonlyMap<string, number>): Promise<Map<string, number>> {
  const rows = await runner.any<{ tenant_id: string; last_seq: string }>(compile(sql`
    select h.tenant_id, h.last_seq from svc_tenant_heads h
      left join unnest(${sql.value([...known.keys()], 'text[]')}, ${sql.value([...known.values()], 'bigint[]')}) as k(tenant_id, seq)
        on k.tenant_id = h.tenant_id
     where h.last_seq > coalesce(k.seq, 0)
     order by h.tenant_id`));
  return new Map(rows.map((row) => [row.tenant_id, Number(row.last_seq)]));
}

/** Every head now (a reader's starting point: changes from now on). */
export async function allHeads(runner: Db | Tx): Promise<Map<string, number>> {
  return headsBeyond(runner, new Map());
}

/** The head of one tenant (0 when it has none). */
export async function headOf(runner: Db | Tx, tenant: string): Promise<number> {
  const row = await runner.oneOrNone<{ last_seq: string }>(compile(sql`
    select last_seq from svc_tenant_heads where tenant_id = ${sql.value(tenant, 'text')}`));
  return row ? Number(row.last_seq) : 0;
}

const COLUMNS = (event: boolean, withData: boolean): Sql => sql.raw([
  'x.tx::text as tx', 'x.seq', 'x.tenant_seq', 'x.id', 'x.stream_type', 'x.stream_id', 'x.event_type', 'x.tenant_id', 'x.occurred_at',
  event ? 'x.version' : '0 as version', event ? 'x.actor_id' : 'null::text as actor_id',
  ...(withData ? [event ? 'x.data' : 'null::jsonb as data'] : []),
].join(', '));

export interface TenantPage {
  readonly changes: FeedChange[];
  /** Where the reader stands in the tenant after this page: its last change, or `upTo` when not full. */
  readonly end: number;
  readonly full: boolean;
  readonly lagMs: number;
}

/**
 * Up to `limit` changes of `tenant` after `after`, at most `upTo` (a head
 * read before: everything up to it is committed), only those `filter` names.
 */
export async function readTenantPage(
  runner: Db | Tx, tenant: string, after: number, upTo: number, limit: number, withData = false, filter: FeedFilter | null = null,
): Promise<TenantPage> {
  const rows = await runner.any(compile(pageSql(tenant, after, upTo, limit, withData, filter)));
  return toPage(rows, limit, upTo, withData);
}

/** One tenant's page to read: after `after`, up to `upTo`. */
export interface TenantRead {
  readonly tenant: string;
  readonly after: number;
  readonly upTo: number;
}

/**
 * Pages of several tenants in one round trip: one statement per tenant (each
 * pinned to its tenant, so each is a single-shard read on Citus), sent
 * together as one simple-protocol string.
 */
export async function readTenantPages(
  runner: Db | Tx, reads: readonly TenantRead[], limit: number, withData = false, filter: FeedFilter | null = null,
): Promise<TenantPage[]> {
  if (reads.length === 0) return [];
  if (reads.length === 1) return [await readTenantPage(runner, reads[0].tenant, reads[0].after, reads[0].upTo, limit, withData, filter)];
  const text = reads.map((r) => {
    const query = compile(pageSql(r.tenant, r.after, r.upTo, limit, withData, filter));
    return fixed(false, 'svc_feed_tenant_page', query.text, query.values) as string;
  }).join(';\n');
  const results = await runner.multi(text);
  return results.map((rows, i) => toPage(rows, limit, reads[i].upTo, withData));
}

function toPage(rows: Array<Record<string, any>>, limit: number, upTo: number, withData: boolean): TenantPage {
  const changes = rows.map((row) => toTenantChange(row, withData));
  const full = changes.length === limit;
  const end = full ? changes.at(-1)!.tenantSeq! : upTo;
  const lagMs = changes.length > 0 ? Math.max(0, Number(rows[0].age_ms)) : 0;
  return { changes, end, full, lagMs };
}

function pageSql(tenant: string, after: number, upTo: number, limit: number, withData: boolean, filter: FeedFilter | null): Sql {
  const scope = TenantScope.of(tenantOfKey(tenant));
  const where = (filtered: boolean) => sql`${scope.over(sql`x.tenant_id`)} and x.tenant_seq > ${sql.value(after, 'bigint')}
      and x.tenant_seq <= ${sql.value(upTo, 'bigint')}${filtered && filter
    ? sql` and (x.stream_type = any(${sql.value(filter.streams, 'text[]')}) or (x.stream_type || ':' || x.event_type) = any(${sql.value(filter.events, 'text[]')}))`
    : sql.empty}`;
  const part = (table: string, event: boolean) => sql`(select ${COLUMNS(event, withData)} from ${sql.ident(table)} x
      where ${where(true)} order by x.tenant_seq limit ${sql.value(limit, 'int')})`;
  return sql`
    select u.*, (extract(epoch from clock_timestamp() - u.occurred_at) * 1000)::float8 as age_ms
      from (${part('svc_events', true)} union all ${part('svc_changes', false)}) u
     order by u.tenant_seq limit ${sql.value(limit, 'int')}`;
}

/** The per-tenant position of an event or change: null when unknown, `tenantSeq` null when never stamped. */
export async function tenantPositionOf(runner: Db | Tx, eventId: string): Promise<{ tenantId: string | null; tenantSeq: number | null } | null> {
  const row = await runner.oneOrNone<{ tenant_id: string | null; tenant_seq: string | null }>(compile(sql`
    select tenant_id, tenant_seq from svc_events where id = ${sql.value(eventId, 'text')}
     union all select tenant_id, tenant_seq from svc_changes where id = ${sql.value(eventId, 'text')} limit 1`));
  if (!row) return null;
  return { tenantId: row.tenant_id, tenantSeq: row.tenant_seq === null ? null : Number(row.tenant_seq) };
}

function toTenantChange(row: Record<string, any>, withData: boolean): FeedChange {
  return {
    position: { tx: row.tx, seq: Number(row.seq) },
    tenantSeq: Number(row.tenant_seq),
    eventId: row.id,
    eventType: row.event_type,
    modelName: row.stream_type,
    recordId: row.stream_id,
    tenantId: row.tenant_id,
    version: row.version,
    actorId: row.actor_id,
    occurredAt: row.occurred_at,
    ...(withData ? { data: row.data } : {}),
  };
}

export { tenantKey };

/**
 * A position as an opaque string (the records cursors' form: base64url
 * JSON), with its mode's version marker: `t1` (tenant, tenant_seq), `g1`
 * (tx, seq).
 */
export function encodePosition(position: TenantPosition | { readonly tx: string; readonly seq: number }): string {
  const body = 'tenant' in position ? { v: 't1', t: position.tenant, s: position.seq } : { v: 'g1', x: position.tx, s: position.seq };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** The position an encoded string names; null when it is not one (an event id, say). */
export function decodePosition(text: string): TenantPosition | { readonly tx: string; readonly seq: number } | null {
  if (text.length > 2048) return null;
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null) return null;
  const b = body as { v?: unknown; t?: unknown; x?: unknown; s?: unknown };
  if (typeof b.s !== 'number' || !Number.isSafeInteger(b.s) || b.s < 0) return null;
  if (b.v === 't1' && typeof b.t === 'string') return { tenant: b.t, seq: b.s };
  if (b.v === 'g1' && typeof b.x === 'string' && /^\d{1,20}$/.test(b.x)) return { tx: b.x, seq: b.s };
  return null;
}
