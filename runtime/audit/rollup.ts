/**
 * The audit statistics' daily rollups (ADR 022, decision 8; migration 0004):
 * per tenant and UTC day, entries by (action, outcome, entity type) in
 * svc_audit_daily and by actor (count, last entry) in svc_audit_daily_actors.
 *
 * Kept by folding, not by triggers: one instance at a time (a
 * transaction-scoped try-lock per batch, as the retention sweep) reads the
 * entries after the watermark `folded_to` by primary key, at most
 * FOLD_BATCH ids per transaction, adds them to the rollups and moves the
 * watermark in the same transaction. So "every entry with id <= folded_to is
 * in the rollups, no other" holds in every snapshot.
 *
 * Ids are handed out before commit, so an id below one already visible may
 * still be in flight. The fold only passes an id once no open transaction can
 * still commit an entry at or below it:
 *
 * - a *mark* is the last id handed out (the identity's sequence, read first),
 *   then the clock: every id handed out after the mark's time is above it;
 * - the *horizon* is the start of the oldest transaction open now on this
 *   database (pg_stat_activity, client backends), or now when none is.
 *
 * A mark older than the horizon is safe: a transaction that took an id at or
 * below it took it before the mark's time, so it started before the horizon,
 * so it is no longer open. The fold goes up to the newest safe mark. Marks are
 * kept in the state row (the newest MAX_MARKS), so that a long transaction
 * holds the fold back to its start only, not for as long as it stays open.
 *
 * Assumes what svc-gen does: every writer of svc_audit connects as a role
 * whose sessions this one sees in pg_stat_activity (the same role, or
 * pg_read_all_stats), and the identity's sequence has no cache (the default).
 */
import type { Db, Tx } from '../db/index.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import { periodic, type Periodic } from '../core/periodic.ts';
import type { Logger } from '../log/index.ts';
import { compile, sql } from '../sql/index.ts';

/** Ids per fold transaction. */
export const FOLD_BATCH = 10_000;
/** How often one instance folds: what a statistics read counts beyond the rollups is about this much of the log. */
export const ROLLUP_MS = 5_000;
/** Marks kept in the state row (one per fold run): the fold passes a transaction open for longer only once it ends. */
export const MAX_MARKS = 60;

/** The last id handed out, then the clock (a materialized CTE: read in that order). */
const MARK = compile(sql`
  with s as materialized (select coalesce(pg_sequence_last_value(pg_get_serial_sequence('svc_audit', 'id')::regclass), 0) as last_id)
  select s.last_id::text as last_id, clock_timestamp()::text as at from s`);

/**
 * The start of the oldest transaction open on this database (other than this
 * session's), or now. `pg_stat_clear_snapshot()`: pg_stat_activity is read
 * afresh, not from a copy this session took earlier.
 */
const HORIZON = compile(sql`
  with fresh as materialized (select pg_stat_clear_snapshot())
  select coalesce(min(a.xact_start), clock_timestamp())::text as horizon
    from fresh left join pg_stat_activity a
      on a.datname = current_database() and a.backend_type = 'client backend'
     and a.pid <> pg_backend_pid() and a.xact_start is not null`);

const LOCK = compile(sql`select pg_try_advisory_xact_lock(${sql.value(LOCK_KEYS.auditRollup, 'bigint')}) as locked`);

interface State {
  readonly folded_to: string;
  readonly marks_id: string[];
  readonly marks_at: string[];
}

/** The state row, locked: the retention sweep takes it first too, so the two never wait on each other in opposite orders. */
// Timestamps travel as text here: a mark's time must keep its microseconds (the driver's dates keep milliseconds).
const STATE = compile(sql`
  select folded_to::text as folded_to, marks_id::text[] as marks_id, marks_at::text[] as marks_at
    from svc_audit_rollup_state for update`);

/** Adds a mark and drops the ones already passed; returns the newest safe one (or the watermark). */
const PLAN = (marksId: string[], marksAt: string[], horizon: string, target: string) => compile(sql`
  update svc_audit_rollup_state set marks_id = ${sql.value(marksId, 'bigint[]')}, marks_at = ${sql.value(marksAt, 'timestamptz[]')},
         updated_at = now()
   returning (select coalesce(max(m.id), ${sql.value(target, 'bigint')})::text
                from unnest(${sql.value(marksId, 'bigint[]')}, ${sql.value(marksAt, 'timestamptz[]')}) as m(id, at)
               where m.at <= ${sql.value(horizon, 'timestamptz')}) as safe`);

/**
 * One batch: the entries with ids in (from, to] into the rollups, and the
 * watermark to `to`, in one statement. Entries of days that the retention
 * sweep has begun to delete are left out (the statistics never read those
 * days' rollups, see statistics.ts).
 */
const FOLD = (from: string, to: string) => compile(sql`
  with e as materialized (
    select coalesce(a.tenant_id, '') as tenant_id, (a.occurred_at at time zone 'UTC')::date as day, a.action, a.outcome,
           coalesce(a.entity_type, '') as entity_type, a.actor_id, a.occurred_at
      from svc_audit a
     where a.id > ${sql.value(from, 'bigint')} and a.id <= ${sql.value(to, 'bigint')}
       and a.occurred_at >= coalesce((select date_trunc('day', s.retained_before, 'UTC') from svc_audit_rollup_state s), '-infinity')),
  daily as (
    insert into svc_audit_daily as r (tenant_id, day, action, outcome, entity_type, entries)
    select tenant_id, day, action, outcome, entity_type, count(*) from e group by 1, 2, 3, 4, 5
    on conflict (tenant_id, day, action, outcome, entity_type) do update set entries = r.entries + excluded.entries),
  actors as (
    insert into svc_audit_daily_actors as r (tenant_id, day, actor_id, entries, last_at)
    select tenant_id, day, actor_id, count(*), max(occurred_at) from e where actor_id is not null group by 1, 2, 3
    on conflict (tenant_id, day, actor_id) do update set entries = r.entries + excluded.entries, last_at = greatest(r.last_at, excluded.last_at))
  update svc_audit_rollup_state
     set folded_to = ${sql.value(to, 'bigint')}, updated_at = now(),
         folded_max_at = greatest(folded_max_at, (select max(occurred_at) from e))
  returning (select count(*) from e)::int as entries`);

export interface FoldResult {
  /** Entries added to the rollups. */
  readonly entries: number;
  /** The watermark after the run. */
  readonly foldedTo: bigint;
  /** False when another instance held the fold. */
  readonly ran: boolean;
}

const smaller = (a: string, b: string) => (BigInt(a) < BigInt(b) ? a : b);

/**
 * One run: a mark, the horizon, then batches up to the newest safe mark
 * (`maxBatches` of them at most; the next run goes on). `stopping()` is asked
 * between batches.
 */
export async function foldAuditRollups(db: Db, options: { batch?: number; maxBatches?: number; stopping?: () => boolean } = {}): Promise<FoldResult> {
  const batch = options.batch ?? FOLD_BATCH;
  const mark = await db.one<{ last_id: string; at: string }>(MARK.text, MARK.values);
  const { horizon } = await db.one<{ horizon: string }>(HORIZON.text, HORIZON.values);
  let entries = 0;
  let target: string | null = null;
  let foldedTo = '0';
  for (let n = 0; n < (options.maxBatches ?? Infinity); n++) {
    if (options.stopping?.()) break;
    const step = await db.tx('svc-audit-rollup', async (t: Tx) => {
      const { locked } = await t.one<{ locked: boolean }>(LOCK.text, LOCK.values);
      if (!locked) return null;
      const state = await t.one<State>(STATE.text, STATE.values);
      if (target === null) {
        // First batch of the run: add this run's mark, keep those not passed yet, find the newest safe one.
        const marks = state.marks_id.map((id, i) => [id, state.marks_at[i]] as const)
          .concat([[mark.last_id, mark.at]])
          .filter(([id]) => BigInt(id) > BigInt(state.folded_to))
          .slice(-MAX_MARKS);
        const plan = PLAN(marks.map(([id]) => id), marks.map(([, at]) => at), horizon, state.folded_to);
        target = (await t.one<{ safe: string }>(plan.text, plan.values)).safe;
      }
      if (BigInt(state.folded_to) >= BigInt(target)) return { folded: 0, to: state.folded_to, done: true };
      const to = smaller(target, (BigInt(state.folded_to) + BigInt(batch)).toString());
      const fold = FOLD(state.folded_to, to);
      const { entries: folded } = await t.one<{ entries: number }>(fold.text, fold.values);
      return { folded, to, done: to === target };
    });
    if (step === null) return { entries, foldedTo: BigInt(foldedTo), ran: false };
    entries += step.folded;
    foldedTo = step.to;
    if (step.done) break;
  }
  return { entries, foldedTo: BigInt(foldedTo), ran: true };
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

/**
 * The rollups of days before `day`, wholly before the retention horizon
 * (nothing reads them any more): at most `batch` rows of each table, found by
 * day (the day bound untyped, so the planner sees its value) and deleted by
 * row address (`= any(array(...))`: a TID scan, never a join over the table).
 */
export const PRUNE_ROLLUPS = (day: string, batch: number) => compile(sql`
  with daily as (delete from svc_audit_daily
                  where ctid = any(array(select r.ctid from svc_audit_daily r
                                          where r.day < ${sql.value(day)} limit ${sql.value(batch, 'int')}))
                 returning 1),
  actors as (delete from svc_audit_daily_actors
              where ctid = any(array(select r.ctid from svc_audit_daily_actors r
                                      where r.day < ${sql.value(day)} limit ${sql.value(batch, 'int')}))
             returning 1)
  select (select count(*) from daily)::int + (select count(*) from actors)::int as n`);

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
