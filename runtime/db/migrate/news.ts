/**
 * What the runner tells a running service, on the Postgres NOTIFY channel
 * `svc_migrations` (whoever runs it: a starting instance, `svc-gen migrate`,
 * the background retry of a held-back contract). Each instance's realtime tier
 * relays every notification to its local subscribers of the realtime channel
 * `migrations` (global scope, Admin only: runtime/realtime/index.ts), so the
 * runner needs no realtime tier of its own and a notification sent in a
 * batch's transaction is heard only once the batch committed.
 */
import type { Db, Tx } from '../types.ts';
import { compile, sql } from '../../sql/index.ts';

/** The Postgres NOTIFY channel. */
export const MIGRATIONS_NOTIFY_CHANNEL = 'svc_migrations';
/** The realtime channel it is relayed on (docs/migrations.md, "Watching a migration"). */
export const MIGRATIONS_REALTIME_CHANNEL = 'migrations';

/** A backfill's progress, after each batch (`phase: 'backfill'`) and once more after its vacuum (`phase: 'done'`). */
export interface BackfillProgress {
  readonly type: 'backfill';
  /** `scope/name` of the file. */
  readonly file: string;
  readonly step: number;
  readonly description: string;
  readonly table: string;
  readonly phase: 'backfill' | 'vacuum' | 'done';
  /** Rows passed in key order (updated or not), over every run of this step. */
  readonly rowsDone: number;
  /** Rows the update changed, over every run of this step. */
  readonly rowsUpdated: number;
  /** The table's `pg_class.reltuples` when the run began (at least rowsDone); null when never analyzed. */
  readonly estimatedTotal: number | null;
  /** rowsDone of estimatedTotal, at most 99 before the last batch; 100 from the last batch on; null without an estimate. */
  readonly percent: number | null;
  /** Rows passed per second in this run. */
  readonly rowsPerSecond: number;
  /** The next batch's size (it adapts to SVC_MIGRATE_BATCH_TARGET_MS). */
  readonly batchRows: number;
  readonly at: string;
}

/** A file applied (its last step recorded), by any runner. */
export interface FileApplied {
  readonly type: 'applied';
  readonly file: string;
  /** The file is the contract half of an expand/contract pair. */
  readonly contract: boolean;
  readonly at: string;
}

export type MigrationNews = BackfillProgress | FileApplied;

/** Sends `news` on the channel: inside `t`'s transaction it is delivered at commit, never on rollback. */
export async function tell(t: Db | Tx, news: MigrationNews): Promise<void> {
  await t.any(compile(sql`select pg_notify(${sql.value(MIGRATIONS_NOTIFY_CHANNEL)}, ${sql.value(JSON.stringify(news))})`));
}
