/**
 * The runner's two tables: `svc_migrations` (one row per applied file, as
 * before) and `svc_migration_steps` (one row per started step: its state, a
 * backfill's cursor, and the claim of the instance running it). Both are
 * created by the runner. Every write that decides who runs what happens in a
 * short transaction under `pg_advisory_xact_lock(LOCK_KEYS.migrations)`, so
 * the runner works through a transaction pooler.
 */
import type { Db, Tx } from '../types.ts';
import { LOCK_KEYS } from '../locks.ts';
import { compile, sql, type Sql } from '../../sql/index.ts';
import { isoUtcSql } from '../time.ts';
import type { Step } from './parse.ts';
import { tell, type BackfillProgress } from './news.ts';
import { parseMigration } from './parse.ts';

export interface MigrationFile {
  readonly scope: string;
  readonly name: string;
  readonly path: string;
  readonly sql: string;
  readonly checksum: string;
}

/** The instance running a step: a token of this run, the backend's pid and start are read in the claim's transaction. */
export interface Claimant {
  readonly token: string;
}

export interface StepRow {
  readonly state: 'running' | 'done';
  readonly checksum: string;
  readonly cursor: string | null;
  readonly rows_done: number;
  readonly claim_token: string | null;
  readonly claim_pid: number | null;
  /** A backfill's last progress (news.ts), null before its first batch. */
  readonly progress: BackfillProgress | null;
  /** The claim's backend or its statement is alive (see `alive`). */
  readonly alive: boolean;
}

/** A claim whose statement is not running and which was not refreshed for this long is stale (behind a pooler the pid says nothing). */
export const STALE_CLAIM_SECS = 15;

/**
 * The migrations' lock for the rest of transaction `t`. Waiting for another
 * instance's short transaction may rightly exceed the pool's statement
 * timeout: lifted for the transaction (a transactional step sets its own after).
 */
export async function lockMigrations(t: Tx): Promise<void> {
  await t.none('set local statement_timeout = 0');
  await t.one(compile(sql`select pg_advisory_xact_lock(${sql.value(LOCK_KEYS.migrations, 'bigint')})`));
}

const CREATE_TABLES = `
  create table if not exists svc_migrations (
    scope text not null,
    name text not null,
    checksum text not null,
    applied_at timestamptz not null default now(),
    primary key (scope, name)
  );
  create table if not exists svc_migration_steps (
    scope text not null,
    name text not null,
    step int not null,
    kind text not null,
    description text not null,
    checksum text not null,
    state text not null check (state in ('running', 'done')),
    cursor text,
    rows_done bigint not null default 0,
    claim_token text,
    claim_pid int,
    claim_backend_start timestamptz,
    heartbeat_at timestamptz,
    started_at timestamptz not null default now(),
    done_at timestamptz,
    primary key (scope, name, step)
  );
  -- a backfill's last progress (news.ts), read by GET /meta/migrations; added later (no ACCESS EXCLUSIVE once it exists)
  do $$ begin
    if not exists (select 1 from pg_attribute where attrelid = 'svc_migration_steps'::regclass and attname = 'progress' and not attisdropped) then
      alter table svc_migration_steps add column progress jsonb;
    end if;
  end $$`;

export async function createTables(db: Db | Tx): Promise<void> {
  await db.tx('svc-migrate-tables', async (tx) => {
    await lockMigrations(tx);
    await tx.multi(CREATE_TABLES);
  });
}

const tableExists = async (t: Db | Tx, name: string) =>
  (await t.one<{ ok: boolean }>(compile(sql`select to_regclass(${sql.value(name, 'text')}) is not null as ok`))).ok;

export async function appliedChecksums(t: Tx | Db): Promise<Map<string, string>> {
  if (!(await tableExists(t, 'svc_migrations'))) return new Map();
  const rows = await t.manyOrNone<{ scope: string; name: string; checksum: string }>(
    'select scope, name, checksum from svc_migrations',
  );
  return new Map(rows.map((row) => [`${row.scope}/${row.name}`, row.checksum]));
}

/** Is the claim of row `s` held by a live instance: its backend exists, and its statement runs or it was refreshed lately. */
const alive = sql`(s.claim_token is not null
  and exists (select 1 from pg_stat_activity a where a.pid = s.claim_pid
               and a.backend_start is not distinct from s.claim_backend_start)
  and (s.heartbeat_at > now() - ${sql.value(STALE_CLAIM_SECS, 'int')} * interval '1 second'
       or exists (select 1 from pg_stat_activity a where a.state = 'active' and a.pid <> pg_backend_pid()
                   and strpos(a.query, ${tokenMarker(sql`s.claim_token`)}) > 0)))`;

/** `/* svc-migrate <token> *\/`: prefixed to a claimed step's statements, so pg_stat_activity shows who runs them. */
function tokenMarker(token: Sql): Sql {
  return sql`'/* svc-migrate ' || ${token} || ' */'`;
}

export const marker = (claimant: Claimant): string => `/* svc-migrate ${claimant.token} */`;

const key = (file: MigrationFile, step: Step) =>
  sql`scope = ${sql.value(file.scope)} and name = ${sql.value(file.name)} and step = ${sql.value(step.number, 'int')}`;

export async function readStep(t: Tx | Db, file: MigrationFile, step: Step): Promise<StepRow | null> {
  return t.oneOrNone<StepRow>(compile(sql`
    select s.state, s.checksum, s.cursor, s.rows_done, s.claim_token, s.claim_pid, s.progress, ${alive} as alive
      from svc_migration_steps s where ${key(file, step)}`));
}

export type ClaimResult =
  | { readonly kind: 'done' }
  | { readonly kind: 'claimed'; readonly row: StepRow | null }
  | { readonly kind: 'busy'; readonly row: StepRow };

/** Takes step `step` for `claimant` unless it is done or a live instance holds it (a short transaction under the lock). */
export function claimStep(db: Db | Tx, file: MigrationFile, step: Step, claimant: Claimant): Promise<ClaimResult> {
  return db.tx('svc-migrate-claim', async (tx) => {
    await lockMigrations(tx);
    const row = await readStep(tx, file, step);
    if (row?.state === 'done') return { kind: 'done' };
    if (row && row.claim_token !== claimant.token && row.alive) return { kind: 'busy', row };
    await tx.none(compile(sql`
      insert into svc_migration_steps as s (scope, name, step, kind, description, checksum, state,
                                            claim_token, claim_pid, claim_backend_start, heartbeat_at)
      select ${sql.value(file.scope)}, ${sql.value(file.name)}, ${sql.value(step.number, 'int')}, ${sql.value(step.kind)},
             ${sql.value(step.description)}, ${sql.value(file.checksum)}, 'running', ${sql.value(claimant.token)}, pg_backend_pid(),
             (select backend_start from pg_stat_activity where pid = pg_backend_pid()), now()
      on conflict (scope, name, step) do update
        set claim_token = excluded.claim_token, claim_pid = excluded.claim_pid,
            claim_backend_start = excluded.claim_backend_start, heartbeat_at = now()`));
    return { kind: 'claimed', row };
  });
}

/** Keeps the claim fresh while the claimant waits between attempts. */
export async function heartbeat(db: Db | Tx, file: MigrationFile, step: Step, claimant: Claimant): Promise<void> {
  await db.none(compile(sql`
    update svc_migration_steps set heartbeat_at = now() where ${key(file, step)} and claim_token = ${sql.value(claimant.token)}`));
}

/**
 * A backfill batch's progress, in the batch's transaction: the cursor, the
 * count, the progress for GET /meta/migrations, and its notification (sent at
 * commit). False when the claim was taken over (the batch must roll back).
 */
export async function advance(tx: Tx, file: MigrationFile, step: Step, claimant: Claimant, cursor: string | null, rows: number, progress: BackfillProgress): Promise<boolean> {
  const result = await tx.result(compile(sql`
    update svc_migration_steps
       set cursor = coalesce(${sql.value(cursor)}, cursor), rows_done = rows_done + ${sql.value(rows, 'bigint')}, heartbeat_at = now(),
           progress = ${sql.value(JSON.stringify(progress))}::jsonb
     where ${key(file, step)} and claim_token = ${sql.value(claimant.token)}`));
  if (result.rowCount !== 1) return false;
  await tell(tx, progress);
  return true;
}

/** A backfill's progress outside a batch (its vacuum, its end): stored and told. */
export async function report(db: Db | Tx, file: MigrationFile, step: Step, progress: BackfillProgress): Promise<void> {
  await db.tx('svc-migrate-progress', async (tx) => {
    await tx.none(compile(sql`update svc_migration_steps set progress = ${sql.value(JSON.stringify(progress))}::jsonb where ${key(file, step)}`));
    await tell(tx, progress);
  });
}

/**
 * Records `step` as done in transaction `tx` (a transactional step's own, or
 * a short one under the lock), and the file in `svc_migrations` when it is
 * the last step.
 */
export async function finishStep(tx: Tx, file: MigrationFile, step: Step, last: boolean): Promise<void> {
  await tx.none(compile(sql`
    insert into svc_migration_steps as s (scope, name, step, kind, description, checksum, state, done_at)
    values (${sql.value(file.scope)}, ${sql.value(file.name)}, ${sql.value(step.number, 'int')}, ${sql.value(step.kind)},
            ${sql.value(step.description)}, ${sql.value(file.checksum)}, 'done', now())
    on conflict (scope, name, step) do update
      set state = 'done', done_at = now(), claim_token = null, claim_pid = null, claim_backend_start = null`));
  if (!last) return;
  const inserted = await tx.result(compile(sql`
    insert into svc_migrations (scope, name, checksum)
    values (${sql.value(file.scope)}, ${sql.value(file.name)}, ${sql.value(file.checksum)})
    on conflict (scope, name) do nothing`));
  if (inserted.rowCount !== 1) return;
  const contract = parseMigration(file.sql).contractOf !== null;
  await tell(tx, { type: 'applied', file: `${file.scope}/${file.name}`, contract, at: new Date().toISOString() });
}

/** Step rows of `file` written with another checksum: the file was edited while it was half applied. */
export async function editedMidway(t: Tx | Db, file: MigrationFile): Promise<boolean> {
  const row = await t.one<{ edited: boolean }>(compile(sql`
    select exists (select 1 from svc_migration_steps
                    where scope = ${sql.value(file.scope)} and name = ${sql.value(file.name)}
                      and checksum <> ${sql.value(file.checksum)}) as edited`));
  return row.edited;
}

/** A step some runner has started and not finished (GET /meta/migrations). */
export interface RunningStep {
  readonly file: string;
  readonly step: number;
  readonly kind: string;
  readonly description: string;
  readonly startedAt: string;
  /** The claimant's last sign of life (each backfill batch refreshes it); null for an unclaimed row. */
  readonly heartbeatAt: string | null;
  /** A live runner holds it (its backend exists, and it runs or refreshed the claim within 15 s); false: a run stopped midway, resumed by the next. */
  readonly live: boolean;
  /** A backfill's last progress (the same object as its last notification), else null. */
  readonly progress: BackfillProgress | null;
}

/** Steps started and not done, oldest first. */
export async function runningSteps(db: Db | Tx): Promise<RunningStep[]> {
  if (!(await tableExists(db, 'svc_migration_steps'))) return [];
  const rows = await db.manyOrNone<{ scope: string; name: string; step: number; kind: string; description: string;
    started_at: string; heartbeat_at: string | null; live: boolean; progress: BackfillProgress | null }>(compile(sql`
    select s.scope, s.name, s.step, s.kind, s.description, ${sql.raw(isoUtcSql('s.started_at'))} as started_at,
           ${sql.raw(isoUtcSql('s.heartbeat_at'))} as heartbeat_at,
           ${alive} as live, s.progress
      from svc_migration_steps s where s.state = 'running' order by s.started_at, s.scope, s.name, s.step`));
  return rows.map((r) => ({
    file: `${r.scope}/${r.name}`, step: r.step, kind: r.kind, description: r.description,
    startedAt: r.started_at, heartbeatAt: r.heartbeat_at, live: r.live, progress: r.progress,
  }));
}

/** Applied migrations, oldest first, with when each was applied (GET /meta/migrations). */
export async function appliedMigrations(db: Db): Promise<Array<{ scope: string; name: string; appliedAt: string }>> {
  if (!(await tableExists(db, 'svc_migrations'))) return [];
  const rows = await db.manyOrNone<{ scope: string; name: string; applied_at: string }>(compile(sql`
    select scope, name, ${sql.raw(isoUtcSql('applied_at'))} as applied_at from svc_migrations order by applied_at, scope, name`));
  return rows.map((row) => ({ scope: row.scope, name: row.name, appliedAt: row.applied_at }));
}
