/**
 * The migration runner: ordered SQL files, one transaction each, recorded with
 * a checksum in `svc_migrations`, under an advisory lock so that instances
 * starting together apply each file exactly once.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Db, Tx } from './types.ts';
import { LOCK_KEYS } from './locks.ts';
import { compile, sql } from '../sql/index.ts';
import { isoUtcSql } from './time.ts';

/** One folder of `NNNN_name.sql` files, applied in file-name order. */
export interface MigrationSet {
  /** `runtime:<capability>` for the runtime's own tables, `schema` for the operator's. */
  readonly scope: string;
  readonly dir: string;
}

interface MigrationFile {
  readonly scope: string;
  readonly name: string;
  readonly path: string;
  readonly sql: string;
  readonly checksum: string;
}

export class MigrationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationError';
  }
}

/** "svc-gen migrate" as a 64-bit advisory lock key (runtime/db/locks.ts). */
const MIGRATION_LOCK_KEY = LOCK_KEYS.migrations;

const CREATE_TABLE = `
  create table if not exists svc_migrations (
    scope text not null,
    name text not null,
    checksum text not null,
    applied_at timestamptz not null default now(),
    primary key (scope, name)
  )`;

function readSet(set: MigrationSet): MigrationFile[] {
  if (!existsSync(set.dir)) return [];
  return readdirSync(set.dir)
    .filter((name) => name.endsWith('.sql'))
    .sort()
    .map((name) => {
      const path = join(set.dir, name);
      const sql = readFileSync(path, 'utf8');
      return { scope: set.scope, name, path, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

async function appliedChecksums(t: Tx | Db): Promise<Map<string, string>> {
  const exists = await t.one<{ ok: boolean }>(`select to_regclass('svc_migrations') is not null as ok`);
  if (!exists.ok) return new Map();
  const rows = await t.manyOrNone<{ scope: string; name: string; checksum: string }>(
    'select scope, name, checksum from svc_migrations',
  );
  return new Map(rows.map((row) => [`${row.scope}/${row.name}`, row.checksum]));
}

function plan(files: MigrationFile[], applied: Map<string, string>): MigrationFile[] {
  const pending: MigrationFile[] = [];
  for (const file of files) {
    const checksum = applied.get(`${file.scope}/${file.name}`);
    if (checksum === undefined) pending.push(file);
    else if (checksum !== file.checksum) {
      throw new MigrationError(
        `${file.path}: migration was edited after it was applied (checksum mismatch); restore it and add a new migration instead`,
      );
    }
  }
  return pending;
}

/** Applies pending migrations of every set, in order. Returns the applied file names. */
export async function migrate(db: Db, sets: readonly MigrationSet[]): Promise<string[]> {
  const files = sets.flatMap(readSet);
  return db.task('svc-migrate', async (t) => {
    // A migration may rightly run long, and so may the wait for another instance's: no statement timeout on this session.
    await t.none('set statement_timeout = 0');
    await t.one(compile(sql`select pg_advisory_lock(${sql.value(MIGRATION_LOCK_KEY, 'bigint')})`));
    try {
      await t.none(CREATE_TABLE);
      const pending = plan(files, await appliedChecksums(t));
      for (const file of pending) {
        await t.tx(async (tx) => {
          try {
            await tx.multi(file.sql);
          } catch (error) {
            throw new MigrationError(`${file.path}: ${(error as Error).message}`);
          }
          await tx.none(compile(sql`
            insert into svc_migrations (scope, name, checksum)
             values (${sql.value(file.scope)}, ${sql.value(file.name)}, ${sql.value(file.checksum)})`));
        });
      }
      return pending.map((file) => `${file.scope}/${file.name}`);
    } finally {
      await t.one(compile(sql`select pg_advisory_unlock(${sql.value(MIGRATION_LOCK_KEY, 'bigint')})`));
      await t.none('reset statement_timeout'); // the connection goes back to the pool
    }
  });
}

/**
 * Applied migrations this build has no file for: the database was migrated by
 * a newer version (of svc-gen or of the schema). Used at boot and by /ready.
 */
export async function unknownMigrations(db: Db, sets: readonly MigrationSet[]): Promise<string[]> {
  return unknownOf(sets.flatMap(readSet), await appliedChecksums(db));
}

function unknownOf(files: MigrationFile[], applied: Map<string, string>): string[] {
  const known = new Set(files.map((file) => `${file.scope}/${file.name}`));
  return [...applied.keys()].filter((key) => !known.has(key)).sort();
}

/**
 * Files not yet applied (throws MigrationError on an edited file) and unknown
 * applied migrations, from one read of the files and one of `svc_migrations`.
 * Used by /ready, which reads the files each time: a deploy may add one.
 */
export async function migrationStatus(db: Db, sets: readonly MigrationSet[]): Promise<{ pending: string[]; unknown: string[] }> {
  const files = sets.flatMap(readSet);
  const applied = await appliedChecksums(db);
  return { pending: plan(files, applied).map((file) => `${file.scope}/${file.name}`), unknown: unknownOf(files, applied) };
}

/** Applied migrations, oldest first, with when each was applied (GET /meta/migrations). */
export async function appliedMigrations(db: Db): Promise<Array<{ scope: string; name: string; appliedAt: string }>> {
  const rows = await db.manyOrNone<{ scope: string; name: string; applied_at: string }>(compile(sql`
    select scope, name, ${sql.raw(isoUtcSql('applied_at'))} as applied_at from svc_migrations order by applied_at, scope, name`));
  return rows.map((row) => ({ scope: row.scope, name: row.name, appliedAt: row.applied_at }));
}
