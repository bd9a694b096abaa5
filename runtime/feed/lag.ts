/**
 * How far behind the log the feed's reader and each durable consumer stand,
 * in their mode's own positions (ADR 025 decision 4), at a cost that does not
 * grow with the log:
 *
 * - global: the log rows after the (tx, seq) position, counted up to
 *   LAG_BOUND (two index walks on (tx, seq));
 * - tenant: per tenant, its head (svc_tenant_heads.last_seq) minus the
 *   position there (a consumer's svc_feed_tenant_cursors row, the reader's
 *   in-memory one; a tenant without one stands at 0, as the reader and the
 *   consumer read it), summed over the tenants: exact, from one row per
 *   tenant, never from the log. Positions are gapless (tenant-seq.ts), so
 *   the difference is the number of changes. Only the split by stream reads
 *   the log: through each behind tenant's (tenant_id, tenant_seq) index, at
 *   most LAG_BOUND rows in all (tenant after tenant, the outer limit stops
 *   the loop; for a tenant with few changes behind the planner may take them
 *   all with a bitmap scan and sort them, for a long one the ordered index
 *   scan stops at the limit).
 */
import type { Db, Tx } from '../db/index.ts';
import { compile, sql, type Sql } from '../sql/index.ts';
import type { FeedPosition } from './read.ts';

/** Log rows read at most to count what lies after a position (and to split it by stream). */
export const LAG_BOUND = 10_000;

export interface Backlog {
  /** Changes after the position (any stream): what is not read yet. */
  readonly behind: number;
  /** True when `behind` is a lower bound (global mode, past LAG_BOUND). Exact in tenant mode. */
  readonly behindIsEstimate: boolean;
  /** Tenant mode: tenants with changes not read yet; null in global mode. */
  readonly tenantsBehind: number | null;
  /** Changes not read yet per stream type, over at most LAG_BOUND of them. */
  readonly byStream: ReadonlyMap<string, number>;
  /** True when `byStream` counts fewer changes than `behind` (the bound cut it). */
  readonly byStreamIsPartial: boolean;
}

const NONE: Backlog = { behind: 0, behindIsEstimate: false, tenantsBehind: 0, byStream: new Map(), byStreamIsPartial: false };

/** Global mode: the log rows after `position`, by stream, up to LAG_BOUND. */
export async function globalBacklog(runner: Db | Tx, position: FeedPosition): Promise<Backlog> {
  const after = sql`(tx, seq) > (${sql.value(position.tx, 'text')}::xid8, ${sql.value(position.seq, 'bigint')})`;
  const rows = await runner.manyOrNone<{ stream_type: string; n: number }>(compile(sql`
    select stream_type, count(*)::int as n from (
      select stream_type from (
        (select tx, seq, stream_type from svc_events where ${after} order by tx, seq limit ${sql.value(LAG_BOUND, 'int')})
        union all
        (select tx, seq, stream_type from svc_changes where ${after} order by tx, seq limit ${sql.value(LAG_BOUND, 'int')})
      ) u order by tx, seq limit ${sql.value(LAG_BOUND, 'int')}) x
     group by stream_type`));
  const behind = rows.reduce((n, r) => n + r.n, 0);
  return {
    behind, behindIsEstimate: behind >= LAG_BOUND, tenantsBehind: null,
    byStream: new Map(rows.map((r) => [r.stream_type, r.n])), byStreamIsPartial: behind >= LAG_BOUND,
  };
}

/** Where a reader or consumer stands in each tenant: a relation of (tenant_id, position) rows. */
type Positions = Sql;

/** A durable consumer's per-tenant cursor rows. */
export const consumerPositions = (consumer: string): Positions => sql`(select tenant_id, position from svc_feed_tenant_cursors
      where consumer = ${sql.value(consumer, 'text')})`;

/** Positions held in memory (the reader's), as a relation. */
export const heldPositions = (held: ReadonlyMap<string, number>): Positions =>
  sql`unnest(${sql.value([...held.keys()], 'text[]')}, ${sql.value([...held.values()], 'bigint[]')})`;

/** The tenants whose head lies beyond `positions`, with both. */
const behindTenants = (positions: Positions) => sql`select h.tenant_id, h.last_seq, coalesce(k.position, 0) as position
      from svc_tenant_heads h left join ${positions} as k(tenant_id, position) on k.tenant_id = h.tenant_id
     where h.last_seq > coalesce(k.position, 0)`;

/** Tenant mode: the changes beyond `positions`, summed over tenants from the heads; by stream from the log, bounded. */
export async function tenantBacklog(runner: Db | Tx, positions: Positions): Promise<Backlog> {
  const total = await runner.one<{ behind: string; tenants: number }>(compile(sql`
    select coalesce(sum(b.last_seq - b.position), 0)::text as behind, count(*)::int as tenants from (${behindTenants(positions)}) b`));
  if (total.tenants === 0) return NONE;
  const behind = Number(total.behind);
  const bound = sql.value(LAG_BOUND, 'int');
  const rows = await runner.manyOrNone<{ stream_type: string; n: number }>(compile(sql`
    select x.stream_type, count(*)::int as n from (
      select y.stream_type from (${behindTenants(positions)}) b cross join lateral (
        (select e.stream_type from svc_events e
          where e.tenant_id = b.tenant_id and e.tenant_seq > b.position order by e.tenant_seq limit ${bound})
        union all
        (select c.stream_type from svc_changes c
          where c.tenant_id = b.tenant_id and c.tenant_seq > b.position order by c.tenant_seq limit ${bound})) y
      limit ${bound}) x
     group by x.stream_type`));
  const counted = rows.reduce((n, r) => n + r.n, 0);
  return {
    behind, behindIsEstimate: false, tenantsBehind: total.tenants,
    byStream: new Map(rows.map((r) => [r.stream_type, r.n])), byStreamIsPartial: counted < behind,
  };
}
