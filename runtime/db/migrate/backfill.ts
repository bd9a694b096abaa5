/**
 * A backfill step: `update "t" set ... where <condition>` run in keyset
 * batches on "id" (or the step's `by "column"`, which need not be unique: a
 * batch ends after every row of its last value), one transaction each, its cursor stored with the batch so a
 * crash resumes after the last finished batch; then `vacuum (analyze)` so the
 * next constraint step does not meet the autovacuum the backfill woke. A
 * table whose primary key is `(..., id)` (layout 3: `(tenant_id, id)`, ADR
 * 025) has no index leading with "id": its batches walk the primary key, and
 * the cursor is the key as a JSON array.
 *
 * A batch holds the row locks of every row it updates until it commits, so a
 * client writing one of them waits for the whole batch: batches start at
 * SVC_MIGRATE_BATCH_ROWS and shrink (or grow back) so that each takes about
 * SVC_MIGRATE_BATCH_TARGET_MS (nextBatchRows).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db, Tx } from '../types.ts';
import { compile, sql, type Sql } from '../../sql/index.ts';
import { parseBackfill, splitStatements, type Step } from './parse.ts';
import { advance, marker, report, type Claimant, type MigrationFile } from './store.ts';
import type { BackfillProgress } from './news.ts';
import { withLockRetry, type MigrateLog } from './retry.ts';
import type { MigrateSettings } from './settings.ts';

export class ClaimLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClaimLostError';
  }
}

export interface BackfillRun {
  readonly file: MigrationFile;
  readonly step: Step;
  readonly claimant: Claimant;
  /** The cursor stored by an earlier, interrupted run. */
  readonly cursor: string | null;
  /** The progress stored by an earlier, interrupted run (its counts go on). */
  readonly progress: BackfillProgress | null;
  readonly settings: MigrateSettings;
  readonly log: MigrateLog;
  readonly what: string;
}

const PROGRESS_EVERY_MS = 5_000;

/** The smallest batch: below it, the per-batch statements cost more than the rows. */
export const MIN_BATCH_ROWS = 100;

/**
 * The next batch's size from the last one's duration: halved when it took
 * over twice the target, grown by half when under half of it, never above
 * `maxRows` (SVC_MIGRATE_BATCH_ROWS) nor below MIN_BATCH_ROWS (or maxRows when smaller).
 */
export function nextBatchRows(rows: number, tookMs: number, targetMs: number, maxRows: number): number {
  const floor = Math.min(MIN_BATCH_ROWS, maxRows);
  if (tookMs > 2 * targetMs) return Math.max(floor, Math.floor(rows / 2));
  if (tookMs < targetMs / 2) return Math.min(maxRows, Math.ceil(rows * 1.5));
  return rows;
}

/** Progress as published (news.ts) and stored: percent of the reltuples estimate, 100 only once the last batch is done. */
export function progressOf(run: BackfillRun, counts: { passed: number; updated: number; estimate: number; thisRun: number; ms: number; batchRows: number },
  phase: BackfillProgress['phase'], last: boolean): BackfillProgress {
  const total = counts.estimate > 0 ? Math.max(Math.round(counts.estimate), counts.passed) : null;
  const percent = last ? 100 : total === null ? null : Math.min(99, Math.floor((counts.passed * 100) / total));
  return {
    type: 'backfill', file: `${run.file.scope}/${run.file.name}`, step: run.step.number, description: run.step.description,
    table: run.step.table as string, phase, rowsDone: counts.passed, rowsUpdated: counts.updated, estimatedTotal: total, percent,
    rowsPerSecond: counts.ms > 0 ? Math.round((counts.thisRun * 1000) / counts.ms) : 0, batchRows: counts.batchRows, at: new Date().toISOString(),
  };
}

export async function runBackfill(t: Db | Tx, run: BackfillRun): Promise<void> {
  const table = run.step.table as string;
  const { head, condition } = parseBackfill(splitStatements(run.step.body)[0], table);
  const ident = sql.ident(table);
  const key = run.step.key ? [run.step.key] : await keyOf(t, table);
  const { empty, estimate } = await t.one<{ empty: boolean; estimate: number }>(compile(sql`
    select not exists (select 1 from ${ident}) as empty,
           greatest((select reltuples from pg_class where oid = to_regclass(${sql.value(table)})), 0)::float8 as estimate`));
  let cursor = readCursor(run.cursor, key);
  let passed = run.progress?.rowsDone ?? 0;
  let updated = run.progress?.rowsUpdated ?? 0;
  const fromPassed = passed;
  let lastReport = Date.now();
  const started = Date.now();
  let size = run.settings.batchRows;
  const counts = () => ({ passed, updated, estimate, thisRun: passed - fromPassed, ms: Date.now() - started, batchRows: size });
  if (empty) {
    run.log.info({ table }, `${run.what}: table ${table} is empty, nothing to backfill`);
    await report(t, run.file, run.step, progressOf(run, counts(), 'done', true));
    return;
  }
  const pacer = await walPacer(t, table, run.settings.walPaceSecs);
  let pacedMs = 0;
  for (;;) {
    const to = await batchEnd(t, ident, key, cursor, size);
    const range = sql.join(between(key, cursor, to), ' and ');
    const where = cursor === null && to === null ? sql`(${sql.raw(condition)})` : sql`(${sql.raw(condition)}) and ${range}`;
    const statement = sql`${sql.raw(marker(run.claimant))} ${sql.raw(head)} where ${where}`;
    const batchStarted = performance.now();
    // The progress this batch reaches, told in its transaction: `passed` counts the rows of the range (the last batch: at most `size`).
    const after = (rows: number) => {
      const reached = passed + (to === null ? rows : size);
      return progressOf(run, { ...counts(), passed: reached, updated: updated + rows, thisRun: reached - fromPassed }, 'backfill', to === null);
    };
    const rows = await withLockRetry(t, { what: run.what, lockTimeoutMs: run.settings.lockTimeoutMs, deadlineSecs: run.settings.deadlineSecs, tables: [table], log: run.log },
      (lockTimeoutMs) => batch(t, run, statement, to === null ? null : writeCursor(to), lockTimeoutMs, after));
    updated += rows;
    passed += to === null ? rows : size;
    size = nextBatchRows(size, performance.now() - batchStarted, run.settings.batchTargetMs, run.settings.batchRows);
    cursor = to ?? cursor;
    if (Date.now() - lastReport >= PROGRESS_EVERY_MS || to === null) {
      lastReport = Date.now();
      const paced = pacer ? `, ${Math.round(pacedMs / 1000)} s paced to ${(pacer.bytesPerSec / 1048576).toFixed(1)} MB/s of WAL` : '';
      run.log.info({ table, passed, updated, estimate, cursor: cursor === null ? null : writeCursor(cursor), batchRows: size, pacedMs }, `${run.what}: backfill of ${table}: about ${passed} of ~${Math.round(estimate)} rows passed, ${updated} updated, ${Math.round((Date.now() - started) / 1000)} s, ${size} rows per batch${paced}`);
    }
    if (to === null) break;
    if (run.settings.batchPauseMs > 0) await sleep(run.settings.batchPauseMs);
    if (pacer) pacedMs += await pacer.delay();
  }
  run.log.info({ table }, `${run.what}: vacuum (analyze) ${table}`);
  await report(t, run.file, run.step, progressOf(run, counts(), 'vacuum', true));
  await vacuum(t, run, ident);
  await report(t, run.file, run.step, progressOf(run, counts(), 'done', true));
}

/**
 * `vacuum (analyze)` at the runner's cost delay (vacuumCostDelayMs, with
 * autovacuum's cost limit 200), set for the session around it and reset
 * after it, as runOnline sets lock_timeout: a vacuum cannot run in a
 * transaction, so SET LOCAL is no option.
 */
async function vacuum(t: Db | Tx, run: BackfillRun, ident: Sql): Promise<void> {
  await t.any(compile(sql`select set_config('vacuum_cost_delay', ${sql.value(`${run.settings.vacuumCostDelayMs}ms`)}, false),
    set_config('vacuum_cost_limit', '200', false)`));
  try {
    await t.none(`${marker(run.claimant)} vacuum (analyze) ${sql.text(ident)}`);
  } finally {
    await t.any(`select set_config('vacuum_cost_delay', (select reset_val from pg_settings where name = 'vacuum_cost_delay'), false),
      set_config('vacuum_cost_limit', (select reset_val from pg_settings where name = 'vacuum_cost_limit'), false)`);
  }
}

/** The longest single pause of the WAL pacing: other sessions' WAL counts too, and must not stop a backfill for long. */
const MAX_PACE_MS = 10_000;

/** How long to wait so that `walBytes` written in `elapsedMs` took at least walBytes / bytesPerSec, at most MAX_PACE_MS. */
export function paceDelayMs(walBytes: number, bytesPerSec: number, elapsedMs: number): number {
  return Math.min(MAX_PACE_MS, Math.max(0, (walBytes / bytesPerSec) * 1000 - elapsedMs));
}

/**
 * Pacing to the server's WAL (SVC_MIGRATE_WAL_PACE_SECS, ADR 019): a
 * backfill writes a new version of every row it updates, and Postgres starts
 * a checkpoint whenever about max_wal_size / (1 + checkpoint_completion_target)
 * of WAL has accumulated. Checkpoints that close together stall every client
 * in their sync phase (measured: 585 ms at the default 1 GB). After each batch
 * the runner waits until the server's WAL since the last look (all sessions':
 * checkpoints count it all) has taken at least `paceSecs` per such interval.
 * Null when pacing is off (0), and for a table smaller than one interval
 * (with its indexes): rewriting it cannot bring checkpoints close together.
 */
export async function walPacer(t: Db | Tx, table: string, paceSecs: number): Promise<{ readonly bytesPerSec: number; delay(): Promise<number> } | null> {
  if (paceSecs === 0) return null;
  const start = await t.one<{ lsn: string; interval: number; size: number }>(compile(sql`
    select pg_current_wal_insert_lsn()::text as lsn, pg_total_relation_size(${sql.value(table)}::regclass)::float8 as size,
           (select setting::float8 * 1048576 from pg_settings where name = 'max_wal_size')
             / (1 + (select setting::float8 from pg_settings where name = 'checkpoint_completion_target')) as interval`));
  if (start.size < start.interval) return null;
  const bytesPerSec = start.interval / paceSecs;
  let lsn = start.lsn;
  let at = performance.now();
  return {
    bytesPerSec,
    async delay() {
      const now = await t.one<{ lsn: string; bytes: number }>(compile(sql`
        select pg_current_wal_insert_lsn()::text as lsn, pg_wal_lsn_diff(pg_current_wal_insert_lsn(), ${sql.value(lsn)}::pg_lsn)::float8 as bytes`));
      const ms = paceDelayMs(now.bytes, bytesPerSec, performance.now() - at);
      lsn = now.lsn;
      if (ms > 0) await sleep(ms);
      at = performance.now();
      return ms;
    },
  };
}

/** The key of the batchRows-th row after `cursor`, or null when fewer remain (the last batch). */
async function batchEnd(t: Db | Tx, ident: Sql, key: readonly string[], cursor: readonly string[] | null, batchRows: number): Promise<string[] | null> {
  const after = cursor === null ? sql`` : sql`where ${tuple(key)} > ${values(cursor)}`;
  const row = await t.oneOrNone<{ key: string[] }>(compile(sql`
    select array[${sql.join(key.map((c) => sql`${sql.ident(c)}::text`), ', ')}] as key from ${ident} ${after}
     order by ${sql.join(key.map((c) => sql.ident(c)), ', ')} offset ${sql.value(batchRows - 1, 'int')} limit 1`));
  return row?.key ?? null;
}

/** `["id"]`, or the primary key's columns when they end with "id" and are more than it (`tenant_id, id`). */
async function keyOf(t: Db | Tx, table: string): Promise<string[]> {
  const rows = await t.manyOrNone<{ column: string }>(compile(sql`
    select a.attname as column from pg_index i cross join lateral unnest(i.indkey) with ordinality as k(attnum, n)
      join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
     where i.indrelid = to_regclass(${sql.value(table)}) and i.indisprimary order by k.n`));
  const columns = rows.map((r) => r.column);
  return columns.length > 1 && columns[columns.length - 1] === 'id' ? columns : ['id'];
}

/**
 * `key > cursor and key <= to` in the form the planner estimates well: within
 * one tenant (every column but the last equal) as equalities and a range on
 * "id"; across tenants as row comparisons bounded on the first column too
 * (a row comparison alone is estimated on its first column, and a tenant
 * holding most rows would make every batch look like the whole table).
 */
function between(key: readonly string[], cursor: readonly string[] | null, to: readonly string[] | null): Sql[] {
  const last = key.length - 1;
  if (cursor !== null && to !== null && key.length > 1 && key.slice(0, last).every((_, i) => cursor[i] === to[i])) {
    return [
      ...key.slice(0, last).map((c, i) => sql`${sql.ident(c)} = ${sql.value(cursor[i])}`),
      sql`${sql.ident(key[last])} > ${sql.value(cursor[last])}`,
      sql`${sql.ident(key[last])} <= ${sql.value(to[last])}`,
    ];
  }
  const bound = (op: Sql, at: readonly string[]) => (key.length > 1 ? [sql`${sql.ident(key[0])} ${op} ${sql.value(at[0])}`] : []);
  return [
    ...(cursor === null ? [] : [sql`${tuple(key)} > ${values(cursor)}`, ...bound(sql.raw('>='), cursor)]),
    ...(to === null ? [] : [sql`${tuple(key)} <= ${values(to)}`, ...bound(sql.raw('<='), to)]),
  ];
}

const tuple = (key: readonly string[]) => (key.length === 1 ? sql.ident(key[0]) : sql`(${sql.join(key.map((c) => sql.ident(c)), ', ')})`);
const values = (cursor: readonly string[]) => (cursor.length === 1 ? sql.value(cursor[0]) : sql`(${sql.join(cursor.map((v) => sql.value(v)), ', ')})`);

/** The stored cursor: the id itself for an `id` key (as before), a JSON array for a composite one. */
function writeCursor(cursor: readonly string[]): string {
  return cursor.length === 1 ? cursor[0] : JSON.stringify(cursor);
}

/** A stored cursor of another key's form (the table's key changed since) restarts the walk: the update's condition skips rows already done. */
function readCursor(stored: string | null, key: readonly string[]): string[] | null {
  if (stored === null) return null;
  if (key.length === 1) return [stored];
  try {
    const parsed: unknown = JSON.parse(stored);
    return Array.isArray(parsed) && parsed.length === key.length && parsed.every((v) => typeof v === 'string') ? parsed : null;
  } catch {
    return null;
  }
}

/** One batch: the update and the cursor in one transaction, with the step's timeouts. */
function batch(t: Db | Tx, run: BackfillRun, statement: Sql, to: string | null, lockTimeoutMs: number,
  progress: (rows: number) => BackfillProgress): Promise<number> {
  return t.tx('svc-migrate-backfill', async (tx) => {
    await tx.any(compile(sql`select set_config('lock_timeout', ${sql.value(`${lockTimeoutMs}ms`)}, true),
                                     set_config('statement_timeout', ${sql.value(`${run.settings.statementTimeoutMs}ms`)}, true)`));
    const result = await tx.result(compile(statement));
    if (!(await advance(tx, run.file, run.step, run.claimant, to, result.rowCount ?? 0, progress(result.rowCount ?? 0)))) {
      throw new ClaimLostError(`${run.what}: another instance took this step over`);
    }
    return result.rowCount ?? 0;
  });
}
