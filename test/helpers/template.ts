/**
 * Template databases (STYLE practice 11): for each fixture a test starts a
 * service with, a database holding every runtime and generated migration,
 * migrated once and cloned per test file with `create database ... template ...`.
 *
 * The name is `svc_tpl_<runtime>_<fixture>_<schema>`: hashes of the runtime's
 * migration files, of the fixture's identity and of its built migrations, so a
 * changed migration makes a new template. Creating one drops the fixture's
 * older templates; global setup drops those of other runtime migrations.
 * A template takes no connections (`allow_connections false`): Postgres
 * refuses to clone a database anyone is connected to.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import type pg from 'pg';
import { admin, databaseUrl, withAdvisoryLock } from './db.ts';
import { buildFixture, hashFiles, REPO_ROOT, schemaPathOf } from './fixtures.ts';

const PREFIX = 'svc_tpl';

function sqlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((name) => name.endsWith('.sql')).sort().map((name) => join(dir, name));
}

const short = (text: string, length: number) => createHash('sha256').update(text).digest('hex').slice(0, length);

/** Hash of the runtime's own migration files (runtime/<capability>/migrations/*.sql). */
export function runtimeMigrationsHash(): string {
  const runtime = join(REPO_ROOT, 'runtime');
  const dirs = readdirSync(runtime).sort().map((name) => join(runtime, name, 'migrations'));
  return hashFiles(REPO_ROOT, dirs.flatMap(sqlFiles)).slice(0, 8);
}

/** A fixture's identity in its templates' names: the schema's path, hashed. */
const identityOf = (fixture: string) => short(relative(REPO_ROOT, schemaPathOf(fixture)), 8);

/** The template of a fixture built into `dir`. */
export function templateName(fixture: string, dir: string): string {
  const migrations = hashFiles(dir, sqlFiles(join(dir, 'migrations'))).slice(0, 12);
  return `${PREFIX}_${runtimeMigrationsHash()}_${identityOf(fixture)}_${migrations}`;
}

const exists = async (c: pg.Client, name: string) =>
  (await c.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;

/** Migrates a database through a connection of its own, closed before the template is cloned. */
async function migrateDatabase(url: string, dir: string): Promise<void> {
  const { default: pgPromise } = await import('../../runtime/db/pg-promise.ts');
  const { migrate } = await import('../../runtime/db/migrate/index.ts');
  const { migrationSets } = await import('../../runtime/service/start.ts');
  const db = pgPromise({ noWarnings: true })({ connectionString: url, max: 1 });
  try {
    await migrate(db, migrationSets(dir));
  } finally {
    await db.$pool.end();
  }
}

/**
 * Drops a stale template unless a clone holds it or a build is connected to
 * it (never forced): what stays goes at a later run.
 */
async function dropTemplate(c: pg.Client, name: string): Promise<void> {
  const { rows } = await c.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtextextended($1, 0)) as ok', [name]);
  if (!rows[0].ok) return;
  try {
    await c.query(`alter database "${name}" with is_template false`);
    await c.query(`drop database if exists "${name}"`);
  } catch {
    // in use: left for a later run
  } finally {
    await c.query('select pg_advisory_unlock(hashtextextended($1, 0))', [name]);
  }
}

/** Builds the template under its name's exclusive lock: migrated under a temporary name, renamed when complete. */
async function createTemplate(c: pg.Client, template: string, fixture: string, dir: string): Promise<void> {
  const building = `${template}_new`;
  await c.query(`drop database if exists "${building}" with (force)`);
  await c.query(`create database "${building}"`);
  await migrateDatabase(databaseUrl(building), dir);
  await c.query(`alter database "${building}" rename to "${template}"`);
  await c.query(`alter database "${template}" with is_template true allow_connections false`);
  const note = `svc-gen test template of ${relative(REPO_ROOT, schemaPathOf(fixture))}, built ${new Date().toISOString()}`;
  await c.query(`comment on database "${template}" is '${note.replaceAll("'", "''")}'`);
  const { rows } = await c.query<{ datname: string }>(
    `select datname from pg_database where datname like $1 and datname <> $2`, [`${PREFIX}\\_%\\_${identityOf(fixture)}\\_%`, template],
  );
  for (const row of rows) await dropTemplate(c, row.datname);
}

/**
 * Creates database `name` as a clone of the fixture's template, creating the
 * template first if no test process has. Clones hold the template's lock
 * shared, so they run together and no one drops the template under them.
 */
export async function cloneTemplate(fixture: string, name: string): Promise<void> {
  const dir = await buildFixture(fixture);
  const template = templateName(fixture, dir);
  const clone = (c: pg.Client) => c.query(`create database "${name}" template "${template}"`);
  const cloned = await withAdvisoryLock(template, async (c) => {
    if (!(await exists(c, template))) return false;
    await clone(c);
    return true;
  }, 'shared');
  if (cloned) return;
  await withAdvisoryLock(template, async (c) => {
    if (!(await exists(c, template))) await createTemplate(c, template, fixture, dir);
    await clone(c);
  });
}

/** Drops the templates built for other runtime migrations than the current files' (global setup). */
export async function dropStaleTemplates(): Promise<void> {
  const current = `${PREFIX}_${runtimeMigrationsHash()}_`;
  await admin(async (c) => {
    const { rows } = await c.query<{ datname: string }>(`select datname from pg_database where datname like $1`, [`${PREFIX}\\_%`]);
    for (const row of rows) if (!row.datname.startsWith(current)) await dropTemplate(c, row.datname);
  });
}
