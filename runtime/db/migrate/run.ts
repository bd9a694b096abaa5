/**
 * Running one file's steps (docs/adr/019-online-migrations.md):
 * - transactional: one transaction under pg_advisory_xact_lock, SET LOCAL
 *   lock_timeout and statement_timeout, the step recorded in it;
 * - online: one statement in autocommit, claimed first so two instances never
 *   run it both, an INVALID index of the same name dropped concurrently first;
 * - backfill: batched (backfill.ts), claimed;
 * - preflight: a select that must return no row, recorded done once it passes.
 * Every lock wait is bounded by lock_timeout and retried (retry.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db, Tx } from '../types.ts';
import { compile, sql } from '../../sql/index.ts';
import type { Step } from './parse.ts';
import { splitStatements } from './parse.ts';
import { classifyStatement, unquote } from './classify.ts';
import {
  claimStep, finishStep, heartbeat, lockMigrations, marker, readStep, type Claimant, type MigrationFile, type StepRow,
} from './store.ts';
import { backoff, MAX_BACKOFF_MS, withLockRetry, type MigrateLog } from './retry.ts';
import { runBackfill } from './backfill.ts';
import type { MigrateSettings } from './settings.ts';
import { MigrationError } from './errors.ts';

export interface StepContext {
  readonly t: Db | Tx;
  readonly file: MigrationFile;
  readonly step: Step;
  readonly last: boolean;
  readonly claimant: Claimant;
  readonly settings: MigrateSettings;
  readonly log: MigrateLog;
}

export const stepName = (file: MigrationFile, step: Step, count: number): string =>
  count === 1 && step.line === 0 ? `${file.scope}/${file.name}` : `${file.scope}/${file.name} step ${step.number} (${step.kind}: ${step.description})`;

/** The tables a statement locks, for naming the holders after a lock timeout. */
function tablesOf(body: string): string[] {
  const none = { isNew: () => false, hasNotNullCheck: () => false, columnType: () => null, tableOfIndex: () => null };
  const tables = splitStatements(body).map((s) => classifyStatement(s, none).table).filter((t): t is string => !!t);
  return [...new Set(tables)];
}

const retryOptions = (c: StepContext, what: string) => ({
  what, lockTimeoutMs: c.settings.lockTimeoutMs, deadlineSecs: c.settings.deadlineSecs, tables: tablesOf(c.step.body), log: c.log,
});

export async function runTransactional(c: StepContext, what: string): Promise<void> {
  await withLockRetry(c.t, retryOptions(c, what), (lockTimeoutMs) => c.t.tx('svc-migrate-step', async (tx) => {
    await lockMigrations(tx);
    if ((await readStep(tx, c.file, c.step))?.state === 'done') return;
    await tx.any(compile(sql`select set_config('statement_timeout', ${sql.value(`${c.settings.statementTimeoutMs}ms`)}, true),
                                    set_config('lock_timeout', ${sql.value(`${lockTimeoutMs}ms`)}, true)`));
    await tx.multi(c.step.body);
    await tx.none('set local lock_timeout = 0');
    await finishStep(tx, c.file, c.step, c.last);
  }));
}

/**
 * Claims the step, runs `work` while holding the claim, then records it done.
 * Waits while a live instance holds it; takes over a stale claim.
 */
export async function runClaimed(c: StepContext, what: string, work: (row: StepRow | null) => Promise<void>): Promise<void> {
  for (let n = 1; ; n++) {
    const claim = await claimStep(c.t, c.file, c.step, c.claimant);
    if (claim.kind === 'done') return;
    if (claim.kind === 'busy') {
      if (n === 1) c.log.info({ pid: claim.row.claim_pid }, `${what}: another instance runs this step (backend pid ${claim.row.claim_pid}); waiting for it`);
      await sleep(backoff(n, MAX_BACKOFF_MS));
      continue;
    }
    if (claim.row?.claim_token) c.log.warn({}, `${what}: resuming a step an earlier run left unfinished${claim.row.cursor ? ` (backfill cursor ${claim.row.cursor})` : ''}`);
    await work(claim.row);
    await c.t.tx('svc-migrate-finish', async (tx) => {
      await lockMigrations(tx);
      await finishStep(tx, c.file, c.step, c.last);
    });
    return;
  }
}

const CREATE_INDEX = /^create (?:unique )?index concurrently (?:if not exists )?("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)/i;

/** An INVALID index of this name, left by an interrupted `create index concurrently`, dropped concurrently. */
async function dropInvalidIndex(c: StepContext, statement: string, what: string): Promise<void> {
  const m = CREATE_INDEX.exec(statement.replace(/\s+/g, ' '));
  if (!m) return;
  const index = unquote(m[1]);
  const row = await c.t.oneOrNone<{ valid: boolean }>(compile(sql`
    select i.indisvalid as valid from pg_index i where i.indexrelid = to_regclass(${sql.value(sql.text(sql.ident(index)))})`));
  if (!row || row.valid) return;
  c.log.warn({ index }, `${what}: dropping the INVALID index ${index} an interrupted build left, before building it again`);
  await c.t.none(`${marker(c.claimant)} drop index concurrently if exists ${sql.text(sql.ident(index))}`);
}

/**
 * One statement in autocommit. lock_timeout and a client connection check
 * (so a build whose runner died stops within a second) are set for the
 * session around it and reset after it; statement_timeout is 0.
 */
export async function runOnline(c: StepContext, what: string): Promise<void> {
  const statement = splitStatements(c.step.body)[0];
  await runClaimed(c, what, () => withLockRetry(c.t, { ...retryOptions(c, what), waiting: () => heartbeat(c.t, c.file, c.step, c.claimant) },
    async (lockTimeoutMs) => {
      await dropInvalidIndex(c, statement, what);
      const before = await c.t.one<{ pid: number }>(compile(sql`select pg_backend_pid() as pid,
          set_config('lock_timeout', ${sql.value(`${lockTimeoutMs}ms`)}, false), set_config('statement_timeout', '0', false),
          set_config('client_connection_check_interval', '1s', false)`));
      try {
        await c.t.none(`${marker(c.claimant)} ${statement}`);
      } catch (error) {
        await dropInvalidIndex(c, statement, what).catch(() => undefined);
        throw error;
      } finally {
        // statement_timeout stays 0 for the runner's session (index.ts resets it at the end).
        const after = await c.t.one<{ pid: number }>(`select pg_backend_pid() as pid,
          set_config('lock_timeout', (select reset_val from pg_settings where name = 'lock_timeout'), false),
          set_config('client_connection_check_interval', (select reset_val from pg_settings where name = 'client_connection_check_interval'), false)`);
        if (after.pid !== before.pid) {
          c.log.warn({ before: before.pid, after: after.pid }, `${what}: ran through a transaction pooler (its session settings reached `
            + `server connections ${before.pid} and ${after.pid}); run migrations on SVC_DIRECT_DATABASE_URL`);
        }
      }
    }));
}

export async function runBackfillStep(c: StepContext, what: string): Promise<void> {
  await runClaimed(c, what, (row) => runBackfill(c.t, {
    file: c.file, step: c.step, claimant: c.claimant, cursor: row?.cursor ?? null, progress: row?.progress ?? null, settings: c.settings, log: c.log, what,
  }));
}

const PREFLIGHT_ROWS = 10;

/** The select must return no row; it runs read-only, with lock_timeout and without statement timeout. */
export async function runPreflight(c: StepContext, what: string): Promise<void> {
  if ((await readStep(c.t, c.file, c.step))?.state === 'done') return;
  const query = splitStatements(c.step.body)[0];
  const rows = await withLockRetry(c.t, retryOptions(c, what), (lockTimeoutMs) => c.t.tx('svc-migrate-preflight', async (tx) => {
    await tx.none('set transaction read only');
    await tx.any(compile(sql`select set_config('lock_timeout', ${sql.value(`${lockTimeoutMs}ms`)}, true),
                                     set_config('statement_timeout', '0', true)`));
    return tx.manyOrNone<Record<string, unknown>>(`select * from (${query}) as offending limit ${PREFLIGHT_ROWS + 1}`);
  }));
  if (rows.length > 0) {
    const shown = rows.slice(0, PREFLIGHT_ROWS).map((row) => JSON.stringify(row)).join(', ');
    throw new MigrationError(`${what} failed: ${rows.length > PREFLIGHT_ROWS ? `more than ${PREFLIGHT_ROWS}` : rows.length} offending row(s), `
      + `first ${Math.min(rows.length, PREFLIGHT_ROWS)}: ${shown}; nothing of this migration from this step on was applied`);
  }
  await c.t.tx('svc-migrate-finish', async (tx) => {
    await lockMigrations(tx);
    await finishStep(tx, c.file, c.step, c.last);
  });
}
