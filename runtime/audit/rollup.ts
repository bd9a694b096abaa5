/**
 * The audit statistics' daily rollups (ADR 022, decision 8; migration 0004):
 * per tenant and UTC day, entries by (action, outcome, entity type) in
 * svc_audit_daily and by actor (count, last entry) in svc_audit_daily_actors.
 *
 * Kept by folding, not by triggers: one instance at a time (a
 * transaction-scoped try-lock per batch, as the retention sweep) reads the
 * entries after the watermark `folded_to` in id order, at most FOLD_BATCH
 * entries per transaction, adds them to the rollups and moves the watermark
 * in the same transaction. So "every entry with id <= folded_to is in the
 * rollups, no other" holds in every snapshot.
 *
 * Ids are time-ordered (audit migration 0005, `svc_audit_next_id()`): the
 * millisecond of the database's clock at the insert, above 22 low bits (since
 * 0007: the node's sequence range and 16 bits of the sequence). An id
 * is made inside its writing transaction, so before commit: an id below one
 * already visible may still be in flight. The fold only passes an id once no
 * open transaction can still commit an entry at or below it:
 *
 * - the *horizon* is the start of the oldest transaction open on this
 *   database (pg_stat_activity, client backends), or the clock read just
 *   before pg_stat_activity when none is; a transaction that pg_stat_activity
 *   does not show yet reports its start before its first statement, so after
 *   that read, and writes its entries later still;
 * - an entry not committed yet belongs to a transaction open at the horizon
 *   or started after it, and its id was made at or after that start, so it is
 *   at or above the first id of the horizon's millisecond.
 *
 * The fold goes up to the ids below the horizon's millisecond, less SETTLE_MS
 * (a margin for a clock the operating system steps back, and on Citus for
 * clocks of nodes that differ). Nothing relies on "a new row gets a larger id
 * than every committed one": a transaction that commits late (it started
 * earlier, or stayed open) holds the horizon back to its start until it ends.
 * Entries written with an old `occurred_at` (a restore) get new ids: folded
 * like any other.
 *
 * Assumes what svc-gen does: every writer of svc_audit connects as a role
 * whose sessions this one sees in pg_stat_activity (the same role, or
 * pg_read_all_stats), and writes ids with svc_audit_next_id() (log.ts).
 */
import type { Db, Tx } from '../db/index.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import { periodic, type Periodic } from '../core/periodic.ts';
import type { Logger } from '../log/index.ts';
import { compile, sql } from '../sql/index.ts';

/** Entries per fold transaction. */
export const FOLD_BATCH = 10_000;
/** How often one instance folds: what a statistics read counts beyond the rollups is about this much of the log. */
export const ROLLUP_MS = 5_000;
/** The fold stays this far behind the horizon: a clock stepped back by less, or nodes' clocks that differ by less, lose nothing. */
export const SETTLE_MS = 1_000;
/** 2020-01-01T00:00:00Z: the epoch of the ids' milliseconds (migration 0005). */
export const ID_EPOCH_MS = 1_577_836_800_000;
/** The ids' low bits, below the millisecond. */
export const ID_LOW_BITS = 22;

/** The first id that `svc_audit_next_id()` can make at `ms` (epoch milliseconds). */
export const firstIdAt = (ms: number): bigint => BigInt(Math.floor(ms) - ID_EPOCH_MS) << BigInt(ID_LOW_BITS);

/** The clock, read before pg_stat_activity (a separate statement: read first). */
const CLOCK = compile(sql`select clock_timestamp()::text as at`);

/**
 * The start of the oldest transaction open on this database (other than this
 * session's), or `at` (the clock read before) when none started before it, in
 * epoch milliseconds. `pg_stat_clear_snapshot()`: pg_stat_activity is read
 * afresh, not from a copy this session took earlier.
 */
const HORIZON = (at: string) => compile(sql`
  with fresh as materialized (select pg_stat_clear_snapshot())
  select floor(extract(epoch from least(min(a.xact_start), ${sql.value(at, 'timestamptz')})) * 1000)::bigint::text as horizon_ms
    from fresh left join pg_stat_activity a
      on a.datname = current_database() and a.backend_type = 'client backend'
     and a.pid <> pg_backend_pid() and a.xact_start is not null`);

const LOCK = compile(sql`select pg_try_advisory_xact_lock(${sql.value(LOCK_KEYS.auditRollup, 'bigint')}) as locked`);

/** The state row, locked: the retention sweep takes it first too, so the two never wait on each other in opposite orders. */
const STATE = compile(sql`select folded_to::text as folded_to from svc_audit_rollup_state for update`);

/**
 * One batch: the next `batch` entries with ids in (from, to], in id order,
 * into the rollups, and the watermark to the last of them (to `to` when fewer
 * were left), in one statement. Entries of days that the retention sweep has
 * begun to delete are left out (the statistics never read those days'
 * rollups, see statistics.ts); the watermark passes them all the same.
 */
const FOLD = (from: string, to: string, batch: number) => compile(sql`
  with w as materialized (
    select a.id, a.tenant_id, a.action, a.outcome, a.entity_type, a.actor_id, a.occurred_at
      from svc_audit a
     where a.id > ${sql.value(from, 'bigint')} and a.id <= ${sql.value(to, 'bigint')}
     order by a.id limit ${sql.value(batch, 'int')}),
  e as materialized (
    select coalesce(w.tenant_id, '') as tenant_id, (w.occurred_at at time zone 'UTC')::date as day, w.action, w.outcome,
           coalesce(w.entity_type, '') as entity_type, w.actor_id, w.occurred_at
      from w
     where w.occurred_at >= coalesce((select date_trunc('day', s.retained_before, 'UTC') from svc_audit_rollup_state s), '-infinity')),
  daily as (
    insert into svc_audit_daily as r (tenant_id, day, action, outcome, entity_type, entries)
    select tenant_id, day, action, outcome, entity_type, count(*) from e group by 1, 2, 3, 4, 5
    on conflict (tenant_id, day, action, outcome, entity_type) do update set entries = r.entries + excluded.entries),
  actors as (
    insert into svc_audit_daily_actors as r (tenant_id, day, actor_id, entries, last_at)
    select tenant_id, day, actor_id, count(*), max(occurred_at) from e where actor_id is not null group by 1, 2, 3
    on conflict (tenant_id, day, actor_id) do update set entries = r.entries + excluded.entries, last_at = greatest(r.last_at, excluded.last_at))
  update svc_audit_rollup_state
     set folded_to = case when (select count(*) from w) < ${sql.value(batch, 'int')} then ${sql.value(to, 'bigint')}
                          else (select max(w.id) from w) end,
         updated_at = now(),
         folded_max_at = greatest(folded_max_at, (select max(occurred_at) from e))
  returning (select count(*) from e)::int as entries, folded_to::text as folded_to`);

export interface FoldResult {
  /** Entries added to the rollups. */
  readonly entries: number;
  /** The watermark after the run. */
  readonly foldedTo: bigint;
  /** False when another instance held the fold. */
  readonly ran: boolean;
}

export interface FoldOptions {
  /** Entries per transaction (FOLD_BATCH). */
  readonly batch?: number;
  readonly maxBatches?: number;
  /** The margin behind the horizon (SETTLE_MS). */
  readonly settleMs?: number;
  readonly stopping?: () => boolean;
}

/**
 * One run: the clock, the horizon, then batches up to the last id below the
 * horizon's millisecond less the margin (`maxBatches` of them at most; the
 * next run goes on). `stopping()` is asked between batches.
 */
export async function foldAuditRollups(db: Db, options: FoldOptions = {}): Promise<FoldResult> {
  const batch = options.batch ?? FOLD_BATCH;
  const { at } = await db.one<{ at: string }>(CLOCK);
  const horizon = HORIZON(at);
  const { horizon_ms } = await db.one<{ horizon_ms: string }>(horizon);
  const target = (firstIdAt(Number(horizon_ms) - (options.settleMs ?? SETTLE_MS)) - 1n).toString();
  let entries = 0;
  let foldedTo: string | null = null;
  for (let n = 0; n < (options.maxBatches ?? Infinity); n++) {
    if (options.stopping?.()) break;
    const step = await db.tx('svc-audit-rollup', async (t: Tx) => {
      const { locked } = await t.one<{ locked: boolean }>(LOCK);
      if (!locked) return null;
      const state = await t.one<{ folded_to: string }>(STATE);
      if (BigInt(state.folded_to) >= BigInt(target)) return { folded: 0, to: state.folded_to, done: true };
      const fold = FOLD(state.folded_to, target, batch);
      const row = await t.one<{ entries: number; folded_to: string }>(fold);
      return { folded: row.entries, to: row.folded_to, done: row.folded_to === target };
    });
    if (step === null) return { entries, foldedTo: BigInt(foldedTo ?? '0'), ran: false };
    entries += step.folded;
    foldedTo = step.to;
    if (step.done) break;
  }
  return { entries, foldedTo: BigInt(foldedTo ?? '0'), ran: true };
}

/**
 * The retention sweep's part, in its batch's transaction before it deletes:
 * entries before `cutoff` may be gone from now on, so the statistics stop
 * reading the rollups of the days they fall in (statistics.ts).
 */
export const RETAIN_BEFORE = (days: number) => compile(sql`
  update svc_audit_rollup_state set retained_before = greatest(retained_before, now() - make_interval(days => ${sql.value(days, 'int')}))`);

/**
 * Locks the state row (the sweep's statements take it before the rollups, as
 * the fold does) and reads the first day the retention horizon has not
 * reached (null before any sweep).
 */
export const LOCK_STATE = compile(sql`
  select (s.retained_before at time zone 'UTC')::date::text as day from svc_audit_rollup_state s for update`);

/** Where the prune's walk over (day, tenant) pairs starts: before every row. */
export const PRUNE_START = { day: '-infinity', tenant: '' } as const;

/**
 * The next tenant with rollups of days before `day` (wholly before the
 * retention horizon: nothing reads them any more), after the pair `after` in
 * (day, tenant) order, through the (day, tenant_id) indexes of both tables
 * (audit migration 0006): one index descent each, however many rows the
 * tenant has, and only pairs below the horizon are looked at. The prune
 * empties each tenant it finds of all its old days, so the walk meets every
 * such tenant once. On Citus a multi-shard read (one row per shard, merged).
 */
export const NEXT_PRUNE_TENANT = (day: string, after: { readonly day: string; readonly tenant: string }) => compile(sql`
  select x.tenant_id, x.day::text as day from (
    (select r.tenant_id, r.day from svc_audit_daily r
      where r.day < ${sql.value(day)} and (r.day, r.tenant_id) > (${sql.value(after.day)}, ${sql.value(after.tenant)})
      order by r.day, r.tenant_id limit 1)
    union all
    (select r.tenant_id, r.day from svc_audit_daily_actors r
      where r.day < ${sql.value(day)} and (r.day, r.tenant_id) > (${sql.value(after.day)}, ${sql.value(after.tenant)})
      order by r.day, r.tenant_id limit 1)) x
   order by x.day, x.tenant_id limit 1`);

/**
 * One tenant's rollups of days before `day`: at most `batch` rows of each
 * table, found and deleted through the tables' keys (tenant_id, day, ...),
 * every reference pinned to the tenant: one shard on Citus.
 */
export const PRUNE_TENANT_ROLLUPS = (tenant: string, day: string, batch: number) => compile(sql`
  with daily as (
    delete from svc_audit_daily r
     using (select d.day, d.action, d.outcome, d.entity_type from svc_audit_daily d
             where d.tenant_id = ${sql.value(tenant)} and d.day < ${sql.value(day)} limit ${sql.value(batch, 'int')}) k
     where r.tenant_id = ${sql.value(tenant)} and r.day = k.day and r.action = k.action and r.outcome = k.outcome and r.entity_type = k.entity_type
    returning 1),
  actors as (
    delete from svc_audit_daily_actors r
     using (select d.day, d.actor_id from svc_audit_daily_actors d
             where d.tenant_id = ${sql.value(tenant)} and d.day < ${sql.value(day)} limit ${sql.value(batch, 'int')}) k
     where r.tenant_id = ${sql.value(tenant)} and r.day = k.day and r.actor_id = k.actor_id
    returning 1)
  select (select count(*) from daily)::int as daily, (select count(*) from actors)::int as actors`);

/** The fold, every ROLLUP_MS on one instance (core/periodic.ts); `stop` ends a run between two batches. */
export function startRollups(db: Db, log: Logger): Periodic {
  let stopping = false;
  const task = periodic(db, log, {
    name: 'audit-rollup', everyMs: ROLLUP_MS, lockKey: LOCK_KEYS.periodicAuditRollup,
    async run() {
      const started = Date.now();
      const result = await foldAuditRollups(db, { stopping: () => stopping });
      if (result.entries >= FOLD_BATCH) log.info({ entries: result.entries, foldedTo: result.foldedTo.toString(), ms: Date.now() - started }, 'audit rollups folded');
    },
  });
  return {
    async stop() {
      stopping = true;
      await task.stop();
    },
  };
}
