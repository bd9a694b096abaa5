/**
 * The history policy (SVC_HISTORY_POLICY) of model streams: `full` keeps every
 * event, `retained` prunes events older than SVC_HISTORY_RETAIN_DAYS, `off`
 * writes none (change notifications still fire). Job streams and other
 * runtime streams are not governed: they are always kept.
 *
 * Every lost event leaves a persistent mark in svc_history_coverage, written
 * in the same transaction as the loss, so a replay can tell for certain
 * whether a model's log is complete.
 */
import type { HistoryPolicy } from '../config/index.ts';
import { untimed, type Db, type Tx } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import { LOCK_KEYS } from '../db/locks.ts';

export interface HistoryOptions {
  readonly policy: HistoryPolicy;
  readonly retainDays: number;
  /** Stream types the policy governs: the schema's model names. */
  readonly models: ReadonlySet<string>;
}

export const FULL_HISTORY: HistoryOptions = { policy: 'full', retainDays: 30, models: new Set() };

/** Held by the retention sweep and by a projection rebuild: a replay never races a prune. */
export const HISTORY_LOCK_KEY = LOCK_KEYS.history;

export type GapReason = 'policy off' | 'retention';

export interface CoverageGap {
  readonly model: string;
  readonly reason: GapReason;
  readonly since: string;
}

/** Records a gap for each model unless one is already recorded (the first reason and time stay). */
export async function markGaps(t: Tx, models: Iterable<string>, reason: GapReason): Promise<void> {
  const list = [...new Set(models)];
  if (list.length === 0) return;
  await t.none(compile(sql`
    insert into svc_history_coverage (model, reason) select m, ${sql.value(reason, 'text')} from unnest(${sql.value(list, 'text[]')}) as m
    on conflict (model) do nothing`));
}

export async function coverageGaps(t: Tx | Db): Promise<CoverageGap[]> {
  const rows = await t.manyOrNone<{ model: string; reason: GapReason; since: string }>(
    'select model, reason, gap_since as since from svc_history_coverage order by model',
  );
  return rows.map((row) => ({ model: row.model, reason: row.reason, since: row.since }));
}

/** Rows deleted per transaction by the sweeps: each batch is short, whatever the backlog. */
export const PRUNE_BATCH = 10_000;

/**
 * Deletes model events older than `retainDays`, in batches of PRUNE_BATCH
 * (one transaction each), recording a gap for each model that lost events.
 * Each batch reads `svc_events_type_occurred` (stream_type, occurred_at) for
 * the governed types below the cutoff: it walks the rows it deletes, never the
 * recent ones nor the runtime streams that are always kept. Returns how many
 * events were deleted.
 */
export async function pruneHistory(db: Db, options: HistoryOptions, stopped: () => boolean = () => false): Promise<number> {
  if (options.policy !== 'retained' || options.models.size === 0) return 0;
  const models = [...options.models];
  const ageSecs = options.retainDays * 86_400;
  let total = 0;
  for (;;) {
    const { n } = await db.tx('svc-history-prune', async (t) => {
      await untimed(t); // a rebuild holds the history lock for as long as it replays
      await t.any(compile(sql`select pg_advisory_xact_lock(${sql.value(HISTORY_LOCK_KEY, 'bigint')})`));
      return t.one<{ n: number }>(compile(sql`
        with doomed as (
           select tenant_id, seq from svc_events
            where stream_type = any(${sql.value(models, 'text[]')})
              and occurred_at < now() - make_interval(secs => ${sql.value(ageSecs, 'double precision')})
            limit ${sql.value(PRUNE_BATCH, 'int')}),
         gone as (delete from svc_events e using doomed d where e.tenant_id = d.tenant_id and e.seq = d.seq returning e.stream_type),
         gap as (insert into svc_history_coverage (model, reason)
                 select distinct stream_type, 'retention' from gone on conflict (model) do nothing)
         select count(*)::int as n from gone`));
    });
    total += n;
    if (n < PRUNE_BATCH || stopped()) return total;
  }
}

/** Sweep period: a quarter of the retention, between 1 second and 1 hour. */
export function sweepIntervalMs(retainDays: number): number {
  return Math.min(3_600_000, Math.max(1_000, (retainDays * 86_400_000) / 4));
}

/** How long svc_changes keeps a change announced without its event (history `off`). */
export const CHANGES_RETAIN_SECS = 86_400;

/**
 * Deletes svc_changes rows older than a day, in batches of PRUNE_BATCH read
 * from `svc_changes_occurred` (occurred_at): the feed and its durable
 * consumers have long read them; a replay further back is refused anyway (the
 * history is off). Returns how many rows were deleted.
 */
export async function pruneChanges(db: Db, stopped: () => boolean = () => false): Promise<number> {
  let total = 0;
  for (;;) {
    const { n } = await db.tx('svc-changes-prune', async (t) => {
      await untimed(t); // a row of the batch may be locked by a writer for longer than the pool's limit
      return t.one<{ n: number }>(compile(sql`
        with doomed as (
           select tenant_id, seq from svc_changes
            where occurred_at < now() - make_interval(secs => ${sql.value(CHANGES_RETAIN_SECS, 'double precision')})
            limit ${sql.value(PRUNE_BATCH, 'int')}),
         gone as (delete from svc_changes c using doomed d where c.tenant_id = d.tenant_id and c.seq = d.seq returning 1)
         select count(*)::int as n from gone`));
    });
    total += n;
    if (n < PRUNE_BATCH || stopped()) return total;
  }
}
