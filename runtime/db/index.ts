/**
 * The database layer: one pg-promise database plus one notification channel,
 * on a real Postgres server (DATABASE_URL) or on embedded PGlite.
 *
 * Rule for every caller (ADR 001): never wait on a second query while holding a
 * client or a transaction. Embedded mode has exactly one connection, so that
 * deadlocks; on a real server it wastes a pooled connection.
 */
import { createHash } from 'node:crypto';
import pgPromise from './pg-promise.ts';
import type { Config } from '../config/index.ts';
import type { IMain, ITaskContext } from 'pg-promise';
import { createPgNotifier, type ClientClass } from './notify.ts';
import type { Database, Db, Tx } from './types.ts';
import { openEmbedded } from './embedded.ts';
import { shrinkGradually } from './shrink.ts';
import { isoUtc } from './time.ts';
import { transactionEnded } from './after-commit.ts';
import { installBeforeCommit } from './before-commit.ts';
import { distributedCheck, installedCheck, type DistributedCheck } from './distributed/index.ts';
import { sameSite } from '../sql/index.ts';

export type { Notifier } from './notify.ts';
export type { Database, Db, Tx } from './types.ts';
export { afterCommit } from './after-commit.ts';
export { beforeCommit } from './before-commit.ts';
export { isoUtc, isoUtcSql } from './time.ts';
export { isDatabaseUnavailable, unavailableMessage } from './unavailable.ts';
export {
  appliedMigrations, migrate, runMigrations, migrationStatus, unknownMigrations, newestMigration, planMigrations, formatPlan, MigrationError,
  runningSteps, MIGRATIONS_NOTIFY_CHANNEL, MIGRATIONS_REALTIME_CHANNEL,
  type MigrationSet, type MigrateLog, type MigrateResult, type RunningStep, type MigrationNews,
} from './migrate/index.ts';

/**
 * May statements be named and prepared (parsed and planned once per
 * connection)? On a server, unless behind a transaction pooler, whose server
 * connections change between transactions (SVC_DB_POOLER, SVC_DB_PREPARED).
 */
export const preparesStatements = (ctx: { readonly dbKind: 'server' | 'embedded'; readonly config: Config }): boolean =>
  ctx.dbKind === 'server' && ctx.config.db.prepared;

/** A prepared statement's name for `text`: `prefix` and a digest of the text, so that one name never serves two texts. */
export function statementName(prefix: string, text: string): string {
  return `${prefix}_${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
}

/** A statement for pg-promise: prepared by name, or text with its values formatted in. */
export type Fixed = string | { readonly name: string; readonly text: string; readonly values: unknown[] };

/**
 * A statement whose text never changes, only its values (background reads
 * and writes that run many times a second under load): named and prepared
 * when `prepared`, so Postgres plans it once per connection instead of on
 * every run; otherwise formatted by pg-promise, as `runner.any(text, values)`
 * would. `name` must belong to this one text.
 */
export function fixed(prepared: boolean, name: string, text: string, values: unknown[]): Fixed {
  if (prepared) return { name, text, values };
  const formatted = pgPromise.as.format(text, values);
  sameSite(formatted, text); // SVC_DISTRIBUTED_CHECK names its call site by text
  return formatted;
}

/** The part of pg's Pool that `anyRows` uses. */
interface PgPool {
  connect(): Promise<{
    query(config: object): Promise<{ rows: unknown[] }>;
    release(): void;
    on(event: 'error', listener: (error: Error) => void): unknown;
    off(event: 'error', listener: (error: Error) => void): unknown;
  }>;
}

/**
 * A connection that breaks while checked out (Postgres restarted, the network
 * cut) fails its statement and then emits 'error'; pg-pool listens only while
 * a connection is idle, and an 'error' nobody listens to ends the process.
 * The failed statement already reports it.
 */
const reportedByTheStatement = () => undefined;

/**
 * `runner.any(statement)` for a hot path: outside a transaction, the statement
 * goes straight to the pool pg-promise owns (the same connections, named
 * statements and rows, without pg-promise's per-query context: ~30 µs of CPU
 * per statement here, docs/adr/009-hot-paths.md); in a task or transaction,
 * through pg-promise as before.
 */
export function anyRows<T>(runner: Db | Tx, statement: { readonly text: string; readonly values?: unknown[]; readonly name?: string }): Promise<T[]> {
  const pool = (runner as { $pool?: PgPool }).$pool;
  return pool ? rowsOnPool<T>(pool, statement) : runner.any<T>(statement);
}

/**
 * One statement on a pooled connection, as pg-promise runs it: the connection
 * goes back to the pool afterwards (pg-pool drops one that broke), and a
 * failed statement's error carries the statement, as pg-promise's do (its
 * name is logged, never its text: runtime/log).
 */
async function rowsOnPool<T>(pool: PgPool, statement: object): Promise<T[]> {
  installedCheck()?.statement(statement, null);
  const client = await pool.connect();
  client.on('error', reportedByTheStatement);
  try {
    return (await client.query(statement)).rows as T[];
  } catch (error) {
    if (typeof error === 'object' && error !== null && !(error as { query?: unknown }).query) {
      (error as { query?: unknown }).query = statement;
    }
    throw error;
  } finally {
    client.off('error', reportedByTheStatement);
    client.release(); // pg-pool drops a connection that broke
  }
}

/**
 * Lifts the pool's statement timeout for the rest of transaction `t`: for work
 * that may rightly take long (migrations, a projection rebuild, start-up DDL,
 * a wait on another instance's advisory lock). Requests never lift it.
 */
export function untimed(t: Tx): Promise<null> {
  return t.none('set local statement_timeout = 0');
}

export interface DatabaseOptions {
  /** Postgres URL; null for embedded PGlite under `embeddedDir`. */
  readonly url: string | null;
  readonly poolSize?: number;
  readonly embeddedDir?: string;
  readonly applicationName?: string;
  /**
   * Postgres without a pooler in between (SVC_DIRECT_DATABASE_URL): LISTEN and
   * session-level locks go there. Null or absent: `url` is direct.
   */
  readonly directUrl?: string | null;
  /** A streaming replica for reads that tolerate lag (SVC_READ_DATABASE_URL). */
  readonly readUrl?: string | null;
  /** A connection no traffic needed for this long is closed, one at a time (shrink.ts); 0 keeps them. */
  readonly idleTimeoutMs?: number;
  /**
   * Postgres cancels a statement of the main and replica pools that runs longer (a startup parameter; 0 or
   * absent: never). Work that may rightly take long lifts it in its transaction (`untimed`).
   */
  readonly statementTimeoutMs?: number;
}

const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

function createPgp(check: DistributedCheck | null): IMain {
  // noWarnings: tests run several instances on one URL in one process, on purpose.
  // transact: after-commit hooks (after-commit.ts); extend: before-commit hooks (before-commit.ts).
  // query: SVC_DISTRIBUTED_CHECK's hook (distributed/index.ts); a throw refuses the statement.
  const query = check ? (e: { query: unknown; ctx?: ITaskContext }) => check.statement(e.query, e.ctx) : undefined;
  const pgp = pgPromise({
    capSQL: true, noWarnings: true, transact: transactionEnded, extend: installBeforeCommit, ...(query ? { query } : {}),
  });
  // timestamptz and timestamp as ISO 8601 UTC strings in the one response format (time.ts);
  // date as 'YYYY-MM-DD'. Never JS Dates: JSON-safe.
  for (const oid of [1114, 1184]) pgp.pg.types.setTypeParser(oid, isoUtc);
  pgp.pg.types.setTypeParser(1082, (value: string) => value);
  pgp.pg.types.setTypeParser(20, (value: string) => Number(value)); // int8 (count(*), bigserial)
  return pgp;
}

/** The database a service's config names: DATABASE_URL (with its topology), or the embedded one in `embeddedDir`. */
export function openServiceDatabase(config: Config, embeddedDir: string): Promise<Database> {
  return openDatabase({
    url: config.databaseUrl,
    poolSize: config.dbPoolSize,
    directUrl: config.db.directUrl,
    readUrl: config.db.readUrl,
    idleTimeoutMs: config.db.idleTimeoutMs,
    // A transaction pooler refuses unknown startup parameters: there the role's own setting applies.
    statementTimeoutMs: config.db.pooler === 'none' ? config.db.statementTimeoutMs : 0,
    embeddedDir,
  });
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const pgp = createPgp(await distributedCheck());
  if (options.url === null) return openEmbedded(pgp, options.embeddedDir ?? '.svc/pgdata');
  const timeout = options.statementTimeoutMs ? { statement_timeout: options.statementTimeoutMs } : {};
  // No pg-pool idle timers: connections that went idle together would close together (shrink.ts).
  const db = pgp({
    connectionString: options.url,
    max: options.poolSize ?? 20,
    idleTimeoutMillis: 0,
    ...timeout,
    application_name: options.applicationName ?? 'svc-gen',
  });
  // A pooled connection killed by the server (restart, pg_terminate_backend, a
  // dropped database) while idle or closing must not crash the process: the
  // pool replaces it on the next checkout.
  db.$pool.on('error', () => undefined);
  const directUrl = options.directUrl ?? options.url;
  const direct = directUrl === options.url ? db : pgp({
    connectionString: directUrl,
    max: 2,
    idleTimeoutMillis: 0,
    application_name: `${options.applicationName ?? 'svc-gen'}-direct`,
  });
  if (direct !== db) direct.$pool.on('error', () => undefined);
  const read = options.readUrl ? pgp({
    connectionString: options.readUrl,
    max: options.poolSize ?? 20,
    idleTimeoutMillis: 0,
    ...timeout,
    application_name: `${options.applicationName ?? 'svc-gen'}-read`,
  }) : db;
  if (read !== db) read.$pool.on('error', () => undefined);
  const idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const pools = [...new Set([db, direct, read])].map((d) => d.$pool);
  const stopShrinking = pools.map((pool) => shrinkGradually(pool, { idleMs }));
  // pg-promise types its pg with a subset of the Client's methods; the class is pg's own.
  const notifier = createPgNotifier(directUrl, pgp.pg.Client as unknown as ClientClass);
  return {
    db,
    direct,
    read,
    pgp,
    notifier,
    kind: 'server',
    async close() {
      for (const stop of stopShrinking) stop();
      await notifier.close();
      await withTimeout(db.$pool.end(), POOL_END_TIMEOUT_MS);
      if (direct !== db) await withTimeout(direct.$pool.end(), POOL_END_TIMEOUT_MS);
      if (read !== db) await withTimeout(read.$pool.end(), POOL_END_TIMEOUT_MS);
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
