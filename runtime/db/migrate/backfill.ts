/**
 * A backfill step: `update "t" set ... where <condition>` run in keyset
 * batches on "id" (or the step's `by "column"`, which need not be unique: a
 * batch ends after every row of its last value), one transaction each, its cursor stored with the batch so a
 * crash resumes after the last finished batch; then `vacuum (analyze)` so the
 * next constraint step does not meet the autovacuum the backfill woke.
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
import { advance, marker, type Claimant, type MigrationFile } from './store.ts';
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

export async function runBackfill(t: Db | Tx, run: BackfillRun): Promise<void> {
  const table = run.step.table as string;
  const { head, condition } = parseBackfill(splitStatements(run.step.body)[0], table);
  const ident = sql.ident(table);
  const key = sql.ident(run.step.key ?? 'id');
  const { empty, estimate } = await t.one<{ empty: boolean; estimate: number }>(compile(sql`
    select not exists (select 1 from ${ident}) as empty,
           greatest((select reltuples from pg_class where oid = to_regclass(${sql.value(table)})), 0)::float8 as estimate`));
  if (empty) {
    run.log.info({ table }, `${run.what}: table ${table} is empty, nothing to backfill`);
    return;
  }
  let cursor = run.cursor;
  let passed = 0;
  let updated = 0;
  let lastReport = Date.now();
  const started = Date.now();
  let size = run.settings.batchRows;
  for (;;) {
    const to = await batchEnd(t, ident, key, cursor, size);
    const range = sql.join([
      ...(cursor === null ? [] : [sql`${key} > ${sql.value(cursor)}`]),
      ...(to === null ? [] : [sql`${key} <= ${sql.value(to)}`]),
    ], ' and ');
    const where = cursor === null && to === null ? sql`(${sql.raw(condition)})` : sql`(${sql.raw(condition)}) and ${range}`;
    const statement = sql`${sql.raw(marker(run.claimant))} ${sql.raw(head)} where ${where}`;
    const batchStarted = performance.now();
    const rows = await withLockRetry(t, { what: run.what, lockTimeoutMs: run.settings.lockTimeoutMs, deadlineSecs: run.settings.deadlineSecs, tables: [table], log: run.log },
      (lockTimeoutMs) => batch(t, run, statement, to, lockTimeoutMs));
    updated += rows;
    passed += to === null ? rows : size;
    size = nextBatchRows(size, performance.now() - batchStarted, run.settings.batchTargetMs, run.settings.batchRows);
    cursor = to ?? cursor;
    if (Date.now() - lastReport >= PROGRESS_EVERY_MS || to === null) {
      lastReport = Date.now();
      run.log.info({ table, passed, updated, estimate, cursor, batchRows: size }, `${run.what}: backfill of ${table}: about ${passed} of ~${Math.round(estimate)} rows passed, ${updated} updated, ${Math.round((Date.now() - started) / 1000)} s, ${size} rows per batch`);
    }
    if (to === null) break;
    if (run.settings.batchPauseMs > 0) await sleep(run.settings.batchPauseMs);
  }
  await t.none(`${marker(run.claimant)} vacuum (analyze) ${sql.text(ident)}`);
}

/** The key of the batchRows-th row after `cursor`, or null when fewer remain (the last batch). */
async function batchEnd(t: Db | Tx, ident: Sql, key: Sql, cursor: string | null, batchRows: number): Promise<string | null> {
  const after = cursor === null ? sql`` : sql`where ${key} > ${sql.value(cursor)}`;
  const row = await t.oneOrNone<{ id: string }>(compile(sql`
    select ${key}::text as id from ${ident} ${after} order by ${key} offset ${sql.value(batchRows - 1, 'int')} limit 1`));
  return row?.id ?? null;
}

/** One batch: the update and the cursor in one transaction, with the step's timeouts. */
function batch(t: Db | Tx, run: BackfillRun, statement: Sql, to: string | null, lockTimeoutMs: number): Promise<number> {
  return t.tx('svc-migrate-backfill', async (tx) => {
    await tx.any(compile(sql`select set_config('lock_timeout', ${sql.value(`${lockTimeoutMs}ms`)}, true),
                                     set_config('statement_timeout', ${sql.value(`${run.settings.statementTimeoutMs}ms`)}, true)`));
    const result = await tx.result(compile(statement));
    if (!(await advance(tx, run.file, run.step, run.claimant, to, result.rowCount ?? 0))) {
      throw new ClaimLostError(`${run.what}: another instance took this step over`);
    }
    return result.rowCount ?? 0;
  });
}
