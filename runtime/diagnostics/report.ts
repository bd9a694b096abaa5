/**
 * The storage diagnostics report (ADR 021): read-only, and never a scan of a
 * whole table. Row counts are the planner's estimates (`pg_class.reltuples`,
 * per model from `pg_stats` of svc_events.stream_type), flagged
 * `...IsEstimate`; a table estimated below CHEAP_ROWS, or any table when the
 * caller passes `exactUpTo`, is counted exactly up to that bound. Consumers'
 * lag is counted from their cursors in the feed's mode (feed/lag.ts). The
 * comparison of a projection with its base table is opt-in and bounded
 * (`verify`: the newest N records). Nothing here writes.
 */
import { isoUtc, type Db } from '../db/index.ts';
import { coverageGaps, type HistoryOptions } from '../events/index.ts';
import { checkNewest, TABLES_CONSUMER, type ProjectionService, type TableProjection } from '../projections/index.ts';
import { compile, sql } from '../sql/index.ts';
import type { Backlog, ChangeFeed } from '../feed/index.ts';

export interface ReadCacheMetrics {
  /** Whatever the read cache reports (hits, misses, entries, ...); `enabled` at least. */
  metrics(): Readonly<Record<string, unknown>> & { readonly enabled: boolean };
}

/** A table estimated below this many rows is counted exactly (a bounded count: cheap by definition). */
export const CHEAP_ROWS = 10_000;
/** Maximum of `exactUpTo`: rows counted per table (or per model) when the caller asks. */
export const MAX_EXACT = 100_000;
/** Maximum of `verify`: newest records compared per projection. */
export const MAX_VERIFY = 10_000;

export interface ReportOptions {
  /** Count exactly up to this many rows per table or model (1..MAX_EXACT); null: estimates above CHEAP_ROWS. */
  readonly exactUpTo: number | null;
  /** Compare the newest this many records of each projection with its base table (1..MAX_VERIFY); null: no comparison. */
  readonly verify: number | null;
}

const iso = (value: string | null | undefined) => (value ? isoUtc(value) : null);

interface Counted {
  readonly value: number;
  readonly isEstimate: boolean;
}

/** Planner estimates of the named tables (in the current schema); -1 for a table never analysed. */
async function estimates(db: Db, tables: readonly string[]): Promise<Map<string, number>> {
  const rows = await db.manyOrNone<{ name: string; estimate: number }>(compile(sql`
    select c.relname as name, c.reltuples::float8 as estimate from pg_class c
     where c.relnamespace = current_schema()::regnamespace and c.relname = any(${sql.value(tables, 'text[]')})`));
  return new Map(rows.map((r) => [r.name, Number(r.estimate)]));
}

/** `count(*)` of at most `bound + 1` rows of `from` (a fragment: a table, or a filtered select). */
async function boundedCount(db: Db, from: ReturnType<typeof sql>, bound: number): Promise<number> {
  const row = await db.one<{ n: number }>(compile(sql`
    select count(*)::int as n from (select 1 from ${from} limit ${sql.value(bound + 1, 'int')}) x`));
  return row.n;
}

/**
 * Exact when asked (up to `exactUpTo`) or when the estimate is small (up to
 * CHEAP_ROWS); otherwise the estimate. Past its bound a count is the larger
 * of the bound and the estimate, flagged as an estimate.
 */
async function count(db: Db, from: ReturnType<typeof sql>, estimate: number | null, exactUpTo: number | null): Promise<Counted> {
  const bound = exactUpTo ?? (estimate === null || estimate < CHEAP_ROWS ? CHEAP_ROWS : null);
  if (bound === null) return { value: Math.round(estimate!), isEstimate: true };
  const n = await boundedCount(db, from, bound);
  return n <= bound ? { value: n, isEstimate: false } : { value: Math.max(bound, Math.round(estimate ?? 0)), isEstimate: true };
}

interface StreamStats {
  readonly vals: string[] | null;
  readonly freqs: number[] | null;
  readonly n_distinct: number;
}

/** Events per model from pg_stats of svc_events.stream_type: a most common value's frequency, or an even share of the rest. */
async function eventEstimates(db: Db, total: number): Promise<(model: string) => number | null> {
  const stats = await db.oneOrNone<StreamStats>(compile(sql`
    select s.most_common_vals::text::text[] as vals, s.most_common_freqs::float8[] as freqs, s.n_distinct::float8 as n_distinct
      from pg_stats s where s.schemaname = current_schema() and s.tablename = 'svc_events' and s.attname = 'stream_type'`));
  if (!stats || total < 0) return () => null;
  const vals = stats.vals ?? [];
  const freqs = (stats.freqs ?? []).map(Number);
  const distinct = stats.n_distinct >= 0 ? stats.n_distinct : -stats.n_distinct * total;
  const rest = Math.max(0, 1 - freqs.reduce((a, b) => a + b, 0));
  const others = Math.max(1, distinct - vals.length);
  return (model) => {
    const i = vals.indexOf(model);
    return i >= 0 ? freqs[i] * total : (rest * total) / others;
  };
}

interface Span {
  readonly model: string;
  readonly first_at: string | null;
  readonly last_at: string | null;
}

export async function historyReport(db: Db, policy: HistoryOptions, models: readonly string[], options: ReportOptions) {
  const total = (await estimates(db, ['svc_events'])).get('svc_events') ?? -1;
  const perModel = await eventEstimates(db, total);
  // First and last event of each model: both ends of svc_events_type_seq, two index probes per model.
  const spans = await db.manyOrNone<Span>(compile(sql`
    select m.model,
           (select e.occurred_at from svc_events e where e.stream_type = m.model order by e.seq limit 1) as first_at,
           (select e.occurred_at from svc_events e where e.stream_type = m.model order by e.seq desc limit 1) as last_at
      from unnest(${sql.value(models, 'text[]')}) as m(model)`));
  const gaps = await coverageGaps(db);
  const items = [];
  for (const model of models) {
    const span = spans.find((s) => s.model === model);
    const gap = gaps.find((g) => g.model === model);
    const estimate = total < 0 ? null : perModel(model);
    const events = span?.first_at
      ? await count(db, sql`svc_events where stream_type = ${sql.value(model, 'text')}`, total < CHEAP_ROWS ? null : estimate, options.exactUpTo)
      : { value: 0, isEstimate: false };
    items.push({
      model,
      policy: policy.policy,
      events: events.value,
      eventsIsEstimate: events.isEstimate,
      firstEventAt: iso(span?.first_at),
      lastEventAt: iso(span?.last_at),
      complete: policy.policy === 'full' && !gap,
      gaps: gap ? [{ reason: gap.reason, since: iso(gap.since) }] : [],
    });
  }
  return { policy: policy.policy, retainDays: policy.policy === 'retained' ? policy.retainDays : null, models: items };
}

interface CursorRow {
  readonly name: string;
  readonly tx: string;
  readonly seq: string;
  readonly updated_at: string;
}

interface ConsumerLag {
  readonly name: string;
  /** Global mode: the cursor; tenant mode: null (the consumer's positions are per tenant). */
  readonly position: { readonly tx: string; readonly seq: number } | null;
  readonly updatedAt: string | null;
  readonly backlog: Backlog;
}

/**
 * Every durable consumer's cursor and what lies beyond it, in the feed's
 * mode (feed/lag.ts): global, the log rows after its (tx, seq) cursor, up to
 * LAG_BOUND; tenant, the heads beyond its per-tenant cursors, summed (its
 * last move: the newest of those rows).
 */
export async function consumerLags(db: Db, feed: Pick<ChangeFeed, 'mode' | 'consumerBacklog'>): Promise<ConsumerLag[]> {
  const tenant = feed.mode === 'tenant';
  const moved = tenant
    ? sql`(select max(c.updated_at) from svc_feed_tenant_cursors c where c.consumer = f.name)`
    : sql`f.updated_at`;
  const cursors = await db.manyOrNone<CursorRow>(compile(sql`
    select f.name, f.tx::text as tx, f.seq::text as seq, ${moved} as updated_at from svc_feed_cursors f order by f.name`));
  const out: ConsumerLag[] = [];
  for (const c of cursors) {
    const position = { tx: c.tx, seq: Number(c.seq) };
    out.push({
      name: c.name, position: tenant ? null : position, updatedAt: iso(c.updated_at),
      backlog: await feed.consumerBacklog(c.name, position),
    });
  }
  return out;
}

/** What the report says of consumers: a plain object per cursor. */
export function consumersReport(lags: readonly ConsumerLag[]) {
  return lags.map((l) => ({
    name: l.name, position: l.position, updatedAt: l.updatedAt,
    /** Changes beyond the cursor (any stream): what the consumer has not read yet (global: up to LAG_BOUND). */
    behind: l.backlog.behind, behindIsEstimate: l.backlog.behindIsEstimate,
    /** Tenant mode: tenants it is behind in (null in global mode). */
    tenantsBehind: l.backlog.tenantsBehind,
  }));
}

interface StateRow {
  readonly name: string;
  readonly last_sync_at: string | null;
  readonly last_rebuild_at: string | null;
}

export async function projectionReport(db: Db, projections: ProjectionService, lags: readonly ConsumerLag[], options: ReportOptions) {
  const state = await db.manyOrNone<StateRow>(compile(sql`select name, last_sync_at, last_rebuild_at from svc_projection_state`));
  const states = await projections.states();
  const tables = projections.list().flatMap((info) => (info.table ? [info.table] : []));
  const sizes = await estimates(db, tables);
  const items = [];
  for (const info of projections.list()) {
    const table = info.kind === 'table' ? projections.tableOf(info.sourceModel) : undefined;
    const consumer = lags.find((l) => l.name === (table ? TABLES_CONSUMER : `projection:${info.name}`));
    const saved = state.find((s) => s.name === info.name);
    const rows = table ? await count(db, sql`${sql.ident(table.table)}`, sizes.get(table.table) ?? null, options.exactUpTo) : null;
    const projectionState = states.get(info.name);
    items.push({
      name: info.name,
      sourceModel: info.sourceModel,
      kind: info.kind,
      status: projectionState?.status ?? 'ready',
      build: projectionState?.build ?? null,
      rows: rows?.value ?? null,
      rowsIsEstimate: rows?.isEstimate ?? false,
      /** Changes of the source model its consumer has not applied yet (the refresh lag), counted over at most LAG_BOUND changes. */
      lagRows: consumer ? (consumer.backlog.byStream.get(info.sourceModel) ?? 0) : null,
      lagIsEstimate: consumer?.backlog.byStreamIsPartial ?? false,
      ...(table && options.verify !== null ? { verified: await verify(db, table, options.verify) } : {}),
      lastSyncAt: iso(saved?.last_sync_at),
      lastRebuildAt: iso(saved?.last_rebuild_at),
    });
  }
  return { refresh: projections.stats(), items };
}

async function verify(db: Db, table: TableProjection, limit: number) {
  const { checked, drift } = await checkNewest(db, table, limit);
  return { newest: limit, checked, drift };
}

/** Audit usage (CONTRACT section 9: rows and bytes): rows estimated above CHEAP_ROWS, bytes from the relation's size. */
export async function auditReport(db: Db, policy: 'full' | 'metadata' | 'off', options: ReportOptions) {
  const estimate = (await estimates(db, ['svc_audit'])).get('svc_audit') ?? null;
  const rows = await count(db, sql`svc_audit`, estimate, options.exactUpTo);
  const { bytes } = await db.one<{ bytes: string }>(compile(sql`select pg_total_relation_size('svc_audit')::text as bytes`));
  return { enabled: policy !== 'off', policy, rows: rows.value, rowsIsEstimate: rows.isEstimate, bytes: Number(bytes) };
}
