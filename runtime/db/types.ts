/**
 * The database layer's handle types, below index.ts and the modules it composes
 * (embedded.ts, migrate.ts), so those import them without importing index.ts.
 */
import type { IDatabase, IMain, ITask } from 'pg-promise';
import type { Notifier } from './notify.ts';

export type Db = IDatabase<unknown>;
/** A task or transaction handle (`db.tx(t => ...)`). */
export type Tx = ITask<unknown>;

export interface Database {
  readonly db: Db;
  /**
   * Postgres itself for work that needs a session (LISTEN; migrations, whose
   * online steps set lock_timeout for the session around one statement):
   * a small pool on `directUrl` when one is given (behind a transaction pooler),
   * else `db`.
   */
  readonly direct: Db;
  /** A read replica's pool when `readUrl` is given, else `db`. */
  readonly read: Db;
  readonly pgp: IMain;
  readonly notifier: Notifier;
  /** 'server' for a real Postgres, 'embedded' for PGlite. */
  readonly kind: 'server' | 'embedded';
  close(): Promise<void>;
}
