/**
 * Real Postgres for tests: every test file gets its own database, created on
 * the local server (empty, or a clone of a fixture's template) and dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** One admin connection for `work`, closed afterwards. */
export async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Runs `work` on an admin connection holding a session advisory lock named
 * `name` (test processes run in parallel): `shared` locks exclude only an
 * exclusive holder. The lock goes with the connection.
 */
export function withAdvisoryLock<T>(name: string, work: (client: pg.Client) => Promise<T>, mode: 'exclusive' | 'shared' = 'exclusive'): Promise<T> {
  const lock = mode === 'shared' ? 'pg_advisory_lock_shared' : 'pg_advisory_lock';
  return admin(async (c) => {
    await c.query(`select ${lock}(hashtextextended($1, 0))`, [name]);
    return work(c);
  });
}

export interface TestDatabaseOptions {
  /**
   * A database for a service of this fixture: a clone of its template, every
   * migration already applied (test/helpers/template.ts). Empty when unset.
   */
  readonly fixture?: string;
}

/** Names carry their creation time, so a cleanup never drops a database a running test uses. */
export async function createTestDatabase(prefix = 'svc_t', options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const name = `${prefix}_${Math.floor(Date.now() / 1000)}_${randomBytes(4).toString('hex')}`;
  if (options.fixture === undefined) await admin((c) => c.query(`create database "${name}"`));
  else await (await import('./template.ts')).cloneTemplate(options.fixture, name);
  return {
    url: databaseUrl(name),
    name,
    drop: () => admin(async (c) => {
      await c.query(`drop database if exists "${name}" with (force)`);
    }),
  };
}

/** Drops databases left behind by crashed runs (older than two hours). */
export async function dropStaleTestDatabases(prefix = 'svc_t'): Promise<void> {
  const cutoff = Math.floor(Date.now() / 1000) - 2 * 3600;
  await admin(async (c) => {
    const { rows } = await c.query<{ datname: string }>(
      `select datname from pg_database where datname like $1`, [`${prefix}\\_%`],
    );
    for (const row of rows) {
      const created = Number(row.datname.slice(prefix.length + 1).split('_')[0]);
      if (Number.isFinite(created) && created < cutoff) await c.query(`drop database if exists "${row.datname}" with (force)`);
    }
  });
}

/** One statement on a connection of its own (the tests' view of the database, beside the server's pools). */
export async function queryOnce<T>(url: string, sql: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows as T[];
  } finally {
    await client.end();
  }
}
