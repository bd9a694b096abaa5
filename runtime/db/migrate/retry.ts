/**
 * Retrying a step that did not get its lock in time: jittered exponential
 * backoff until the deadline, one log line per wait naming what held the
 * lock (the holders' queries from pg_stat_activity), and one attempt with a
 * lock_timeout just above deadlock_timeout when an autovacuum worker holds the
 * table: Postgres cancels an autovacuum only for a waiter older than
 * deadlock_timeout.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db, Tx } from '../types.ts';
import { compile, sql } from '../../sql/index.ts';

/** SQLSTATEs the runner retries: lock_not_available (lock_timeout), deadlock_detected. */
export const LOCK_NOT_AVAILABLE = '55P03';
export const DEADLOCK_DETECTED = '40P01';
const RETRIED = new Set([LOCK_NOT_AVAILABLE, DEADLOCK_DETECTED]);

/** Backoff between attempts: from the lock timeout, doubling, capped so a freed lock is taken within about a second. */
export const MAX_BACKOFF_MS = 1_000;

/** pino's shape, so a service passes its logger. */
export interface MigrateLog {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface Holder {
  readonly pid: number;
  readonly backend_type: string;
  readonly state: string | null;
  readonly seconds: number | null;
  readonly query: string;
}

export interface RetryOptions {
  /** The step, for the log: `schema/0003_x.sql step 2`. */
  readonly what: string;
  readonly lockTimeoutMs: number;
  readonly deadlineSecs: number;
  /** Tables whose lock holders are looked up after a lock timeout. */
  readonly tables: readonly string[];
  readonly log: MigrateLog;
  /** Called while waiting between attempts (a claim's heartbeat). */
  readonly waiting?: () => Promise<void>;
}

export class LockDeadlineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LockDeadlineError';
  }
}

const codeOf = (error: unknown) => (error as { code?: string } | null)?.code;

/** Runs `attempt(lockTimeoutMs)` until it does not fail on a lock, or the deadline passes. */
export async function withLockRetry<T>(db: Db | Tx, options: RetryOptions, attempt: (lockTimeoutMs: number) => Promise<T>): Promise<T> {
  const started = Date.now();
  const deadline = started + options.deadlineSecs * 1000;
  let lockTimeoutMs = options.lockTimeoutMs;
  const vacuumed = new Set<number>();
  for (let n = 1; ; n++) {
    try {
      return await attempt(lockTimeoutMs);
    } catch (error) {
      if (!RETRIED.has(codeOf(error) ?? '')) throw error;
      const holders = await lockHolders(db, options.tables);
      const vacuum = holders.find((h) => h.backend_type === 'autovacuum worker' && !vacuumed.has(h.pid));
      if (vacuum) vacuumed.add(vacuum.pid);
      lockTimeoutMs = vacuum ? await aboveDeadlockTimeout(db) : options.lockTimeoutMs;
      const delay = vacuum ? 0 : backoff(n, options.lockTimeoutMs);
      if (Date.now() + delay > deadline) {
        throw new LockDeadlineError(`${options.what}: no lock after ${n} attempts in ${Math.round((Date.now() - started) / 1000)} s `
          + `(SVC_MIGRATE_DEADLINE_SECS=${options.deadlineSecs}); ${describe(holders)}`);
      }
      options.log.warn({ attempt: n, retryInMs: delay, code: codeOf(error), holders, nextLockTimeoutMs: lockTimeoutMs },
        `${options.what}: ${codeOf(error) === DEADLOCK_DETECTED ? 'deadlock' : `lock not granted within ${options.lockTimeoutMs} ms`}`
        + ` (attempt ${n}), ${vacuum ? 'an autovacuum holds the table: one attempt that outwaits deadlock_timeout' : `retry in ${delay} ms`}; ${describe(holders)}`);
      await options.waiting?.();
      if (delay > 0) await sleep(delay);
    }
  }
}

/** Jittered exponential backoff: base * 2^(n-1), capped, times 0.5-1. */
export function backoff(attempt: number, baseMs: number): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.min(attempt - 1, 20));
  return Math.round(ceiling * (0.5 + Math.random() / 2));
}

function describe(holders: readonly Holder[]): string {
  if (holders.length === 0) return 'the holder had already gone';
  return 'held by ' + holders.map((h) => `pid ${h.pid} (${h.backend_type}${h.state ? `, ${h.state}` : ''}`
    + `${h.seconds === null ? '' : ` for ${h.seconds.toFixed(1)} s`}): ${h.query || '(no query)'}`).join('; ');
}

/**
 * The oldest other backends holding a lock on any of `tables` (the likely
 * blockers: the wait itself ended with the timeout, so pg_blocking_pids no
 * longer names them), autovacuum workers first.
 */
export async function lockHolders(db: Db | Tx, tables: readonly string[]): Promise<Holder[]> {
  if (tables.length === 0) return [];
  return db.manyOrNone<Holder>(compile(sql`
    select a.pid, a.backend_type, a.state, extract(epoch from now() - coalesce(a.xact_start, a.query_start))::float8 as seconds,
           left(regexp_replace(a.query, '\\s+', ' ', 'g'), 300) as query
      from pg_stat_activity a
     where a.pid <> pg_backend_pid()
       and a.pid in (select l.pid from pg_locks l
                      where l.granted and l.relation in (select to_regclass(t) from unnest(${sql.value(tables, 'text[]')}) t))
     order by a.backend_type = 'autovacuum worker' desc, coalesce(a.xact_start, a.query_start) limit 3`));
}

/** deadlock_timeout plus a margin, in ms: a waiter this old gets a blocking autovacuum cancelled. */
async function aboveDeadlockTimeout(db: Db | Tx): Promise<number> {
  const row = await db.one<{ ms: number }>(`select setting::int as ms from pg_settings where name = 'deadlock_timeout'`);
  return row.ms + 200;
}
