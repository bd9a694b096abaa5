/** Migration folders written by a test, a pg-promise pool on a test database, and a log that records what the runner says. */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pgPromise from '../../runtime/db/pg-promise.ts';
import type { Db } from '../../runtime/db/types.ts';
import type { MigrateLog } from '../../runtime/db/migrate/index.ts';
import type { MigrationSet } from '../../runtime/db/migrate/files.ts';

const pgp = pgPromise({ noWarnings: true });

export function openDb(url: string, max = 2): Db {
  const db = pgp({ connectionString: url, max, idleTimeoutMillis: 0 });
  db.$pool.on('error', () => undefined);
  return db;
}

/** A `schema` set in a new folder holding `files` (name -> SQL). */
export function schemaSet(files: Record<string, string>): MigrationSet & { add(name: string, sql: string): void } {
  const dir = join(mkdtempSync(join(tmpdir(), 'svc-migrate-')), 'migrations');
  mkdirSync(dir);
  const add = (name: string, sql: string) => writeFileSync(join(dir, name), sql);
  for (const [name, sql] of Object.entries(files)) add(name, sql);
  return { scope: 'schema', dir, add };
}

export interface Line { readonly at: number; readonly level: 'info' | 'warn'; readonly message: string; readonly details: object }

export function recordingLog(): MigrateLog & { lines: Line[]; waitFor(pattern: RegExp, count?: number): Promise<Line> } {
  const lines: Line[] = [];
  const waiters: Array<() => void> = [];
  const push = (level: Line['level']) => (details: object, message: string) => {
    lines.push({ at: Date.now(), level, message, details });
    for (const wake of waiters.splice(0)) wake();
  };
  return {
    lines,
    info: push('info'),
    warn: push('warn'),
    async waitFor(pattern, count = 1) {
      for (;;) {
        const matching = lines.filter((line) => pattern.test(line.message));
        if (matching.length >= count) return matching[count - 1];
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

/** A table like a generated model's: text ulid-ish id, tenant, data columns; `rows` rows. */
export function modelTable(table: string, rows: number): string {
  return `create table "${table}" (
  "id" text primary key,
  "tenant_id" text not null,
  "email" text,
  "n" integer not null,
  "kind" text
);
insert into "${table}" ("id", "tenant_id", "email", "n")
  select lpad(to_hex(g), 26, '0'), 't' || (g % 10), 'user' || g || '@example.com', g from generate_series(1, ${rows}) g;
analyze "${table}";
`;
}

/** Polls `check` on the database until it is true (conditions, not sleeps: each poll is a query). */
export async function until(db: Db, check: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const row = await db.one<{ ok: boolean }>(`select (${check}) as ok`);
    if (row.ok) return;
    await db.one('select pg_sleep(0.02)');
  }
  throw new Error(`timed out waiting for: ${check}`);
}
