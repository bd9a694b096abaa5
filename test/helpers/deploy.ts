/**
 * Generated migrations applied by the real runner (runtime/db/migrate), as an
 * operator deploys them: each build's new files are copied into a deployed
 * `migrations/` folder and `migrate` runs, with the runtime's realtime set (its
 * instance registry is what holds a contract back). Everything lives in a
 * Postgres schema of its own, so several projects share one test database.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { runMigrations, type MigrateResult, type MigrateSettings, type MigrationSet } from '../../runtime/db/migrate/index.ts';
import pgPromise from '../../runtime/db/pg-promise.ts';
import type { Db } from '../../runtime/db/types.ts';
import { REPO_ROOT } from './fixtures.ts';

const pgp = pgPromise({ noWarnings: true });

/** Tests run many small backfills: no pause between batches. */
const QUICK: Partial<MigrateSettings> = { batchPauseMs: 0 };

export interface Deployment {
  /** Copies `files` (paths of a build's migrations) into the deployed folder and runs every pending migration. */
  migrate(files: readonly string[], settings?: Partial<MigrateSettings>): Promise<MigrateResult>;
  close(): Promise<void>;
}

/** A deployment into `schema` (which must exist) of the database at `url`. */
export function deployment(url: string, schema: string): Deployment {
  const inSchema = new URL(url);
  inSchema.searchParams.set('options', `-c search_path=${schema}`);
  const db: Db = pgp({ connectionString: inSchema.toString(), max: 2 });
  // pg's pool.end() resolves before its clients' sockets close: a test that drops the database right
  // after close() terminates a client still closing, whose FATAL 57P01 would be an unhandled error.
  db.$pool.on('connect', (client) => client.on('error', () => undefined));
  const root = mkdtempSync(join(tmpdir(), 'svc-gen-deploy-'));
  const dir = join(root, 'migrations');
  mkdirSync(dir);
  const sets: MigrationSet[] = [{ scope: 'runtime:realtime', dir: join(REPO_ROOT, 'runtime', 'realtime', 'migrations') }, { scope: 'schema', dir }];
  return {
    async migrate(files, settings = {}) {
      for (const file of files) copyFileSync(file, join(dir, basename(file)));
      return runMigrations(db, sets, { settings: { ...QUICK, ...settings } });
    },
    async close() {
      await db.$pool.end();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
