/**
 * The database layer: one pg-promise database plus one notification channel,
 * on a real Postgres server (DATABASE_URL) or on embedded PGlite.
 *
 * Rule for every caller (ADR 001): never wait on a second query while holding a
 * client or a transaction. Embedded mode has exactly one connection, so that
 * deadlocks; on a real server it wastes a pooled connection.
 */
import pgPromise from 'pg-promise';
import type { IDatabase, IMain, ITask } from 'pg-promise';
import { createPgNotifier, type Notifier } from './notify.ts';
import { openEmbedded } from './embedded.ts';

export type { Notifier } from './notify.ts';
export { migrate, pendingMigrations, MigrationError, type MigrationSet } from './migrate.ts';

export type Db = IDatabase<unknown>;
/** A task or transaction handle (`db.tx(t => ...)`). */
export type Tx = ITask<unknown>;

export interface Database {
  readonly db: Db;
  readonly pgp: IMain;
  readonly notifier: Notifier;
  /** 'server' for a real Postgres, 'embedded' for PGlite. */
  readonly kind: 'server' | 'embedded';
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** Postgres URL; null for embedded PGlite under `embeddedDir`. */
  readonly url: string | null;
  readonly poolSize?: number;
  readonly embeddedDir?: string;
  readonly applicationName?: string;
}

function createPgp(): IMain {
  // noWarnings: tests run several instances on one URL in one process, on purpose.
  const pgp = pgPromise({ capSQL: true, noWarnings: true });
  // timestamptz / timestamp / date as ISO strings, never JS Dates: JSON-safe and lossless.
  for (const oid of [1082, 1114, 1184]) pgp.pg.types.setTypeParser(oid, (value: string) => value);
  pgp.pg.types.setTypeParser(20, (value: string) => Number(value)); // int8 (count(*), bigserial)
  return pgp;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const pgp = createPgp();
  if (options.url === null) return openEmbedded(pgp, options.embeddedDir ?? '.svc/pgdata');
  const db = pgp({
    connectionString: options.url,
    max: options.poolSize ?? 20,
    application_name: options.applicationName ?? 'svc-gen',
  });
  // A pooled connection killed by the server (restart, pg_terminate_backend, a
  // dropped database) while idle or closing must not crash the process: the
  // pool replaces it on the next checkout.
  db.$pool.on('error', () => undefined);
  const notifier = createPgNotifier(options.url);
  return {
    db,
    pgp,
    notifier,
    kind: 'server',
    async close() {
      await notifier.close();
      await withTimeout(db.$pool.end(), POOL_END_TIMEOUT_MS);
    },
  };
}

/** Shutdown must finish: a connection still checked out after this is abandoned. */
const POOL_END_TIMEOUT_MS = 5_000;

function withTimeout(work: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    work.then(() => resolve(), () => resolve()).finally(() => clearTimeout(timer));
  });
}
