/**
 * A run killed with SIGKILL resumes: in the middle of a concurrent index build
 * (no INVALID index left, the index built) and of a backfill (from its cursor).
 * The runner runs in a child process; the moment to kill it is read from
 * pg_stat_progress_create_index and svc_migration_steps, never slept for.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { migrate } from '../../runtime/db/migrate/index.ts';
import type { Db } from '../../runtime/db/types.ts';
import { modelTable, openDb, recordingLog, schemaSet, until } from './helpers.ts';

const CHILD = fileURLToPath(new URL('./child.ts', import.meta.url));

let database: TestDatabase;
let db: Db;
const children: ChildProcess[] = [];

beforeAll(async () => {
  database = await createTestDatabase('svc_t_migrate_kill');
  db = openDb(database.url, 3);
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await db?.$pool.end();
  await database?.drop();
});

function runChild(dir: string, env: Record<string, string> = {}): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, database.url, dir], { env: { ...process.env, ...env } });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

const value = async <T>(query: string): Promise<T> => (await db.one<{ v: T }>(query)).v;

describe('kill -9', { timeout: 120_000 }, () => {
  it('in the middle of create index concurrently: the rerun drops the INVALID index and builds it', async () => {
    // A slow expression (1 ms a row) makes a 5,000-row build last seconds: long enough to be caught mid-build.
    const set = schemaSet({
      '0001_big.sql': `${modelTable('big', 5_000)}
create function slow_key(n integer) returns integer language plpgsql immutable as $$ begin perform pg_sleep(0.001); return n; end $$;\n`,
    });
    await migrate(db, [set]);
    set.add('0002_index.sql', '-- svc-gen migration 0002: index Big.n\n-- step 1 online: index on slow_key(Big.n)\ncreate index concurrently if not exists "big_slow_idx" on "big" (slow_key("n"));\n');
    const run = runChild(set.dir);
    await until(db, `exists (select 1 from pg_stat_progress_create_index where relid = to_regclass('big') and phase like 'building index%')`);
    run.child.kill('SIGKILL');
    await run.exited;
    // The build's backend notices its client is gone within client_connection_check_interval (1 s) and stops.
    await until(db, `not exists (select 1 from pg_stat_activity where query like '%big_slow_idx%' and pid <> pg_backend_pid())`);
    expect(await value<boolean>(`select indisvalid as v from pg_index where indexrelid = to_regclass('big_slow_idx')`)).toBe(false);
    expect(await value<string>(`select state as v from svc_migration_steps where name = '0002_index.sql'`)).toBe('running');

    const log = recordingLog();
    expect(await migrate(db, [set], { log })).toEqual(['schema/0002_index.sql']);
    expect(log.lines.map((l) => l.message)).toContain(
      'schema/0002_index.sql step 1 (online: index on slow_key(Big.n)): dropping the INVALID index big_slow_idx an interrupted build left, before building it again');
    expect(await value<boolean>(`select indisvalid as v from pg_index where indexrelid = to_regclass('big_slow_idx')`)).toBe(true);
    expect(await value<number>(`select count(*)::int as v from pg_index where not indisvalid`)).toBe(0);
  });

  it('in the middle of a backfill: the rerun resumes from the stored cursor and fills every row once', async () => {
    const set = schemaSet({ '0001_fill.sql': modelTable('fill', 40_000) });
    await migrate(db, [set]);
    set.add('0002_fill.sql', `-- svc-gen migration 0002: fill Fill.kind
-- step 1 backfill "fill": Fill.kind from n, Fill.email marked
update "fill" set "kind" = 'k' || "n", "email" = "email" || '+' where "kind" is null;
`);
    const run = runChild(set.dir, { SVC_MIGRATE_BATCH_ROWS: '1000', SVC_MIGRATE_BATCH_PAUSE_MS: '30' });
    await until(db, `exists (select 1 from svc_migration_steps where name = '0002_fill.sql' and rows_done >= 5000)`);
    run.child.kill('SIGKILL');
    await run.exited;
    const stored = await db.one<{ cursor: string; rows_done: string }>(`select cursor, rows_done from svc_migration_steps where name = '0002_fill.sql'`);
    expect(Number(stored.rows_done)).toBeLessThan(40_000);
    expect(await value<number>(`select count(*)::int as v from "fill" where "kind" is not null`)).toBe(Number(stored.rows_done));

    const log = recordingLog();
    expect(await migrate(db, [set], { log, settings: { batchRows: 5_000, batchPauseMs: 0 } })).toEqual(['schema/0002_fill.sql']);
    expect(log.lines.map((l) => l.message)).toContain(
      `schema/0002_fill.sql step 1 (backfill: Fill.kind from n, Fill.email marked): resuming a step an earlier run left unfinished (backfill cursor ${stored.cursor})`);
    expect(await value<number>(`select count(*)::int as v from "fill" where "kind" is distinct from 'k' || "n" or "email" not like '%.com+'`)).toBe(0);
    expect(Number(await value<string>(`select rows_done::text as v from svc_migration_steps where name = '0002_fill.sql'`))).toBe(40_000);
  });

  it('in the middle of a backfill on a table keyed (tenant_id, id) (layout 3): the cursor is the key, the rerun fills every row once', async () => {
    const table = modelTable('kfill', 40_000).replace('"id" text primary key,', '"id" text not null,').replace('"kind" text\n);', '"kind" text,\n  primary key ("tenant_id", "id")\n);');
    const set = schemaSet({ '0001_kfill.sql': table });
    await migrate(db, [set]);
    set.add('0002_kfill.sql', `-- svc-gen migration 0002: fill Kfill.kind
-- step 1 backfill "kfill": Kfill.kind from n, Kfill.email marked
update "kfill" set "kind" = 'k' || "n", "email" = "email" || '+' where "kind" is null;
`);
    const run = runChild(set.dir, { SVC_MIGRATE_BATCH_ROWS: '1000', SVC_MIGRATE_BATCH_PAUSE_MS: '30' });
    await until(db, `exists (select 1 from svc_migration_steps where name = '0002_kfill.sql' and rows_done >= 5000)`);
    run.child.kill('SIGKILL');
    await run.exited;
    const stored = await db.one<{ cursor: string; rows_done: string }>(`select cursor, rows_done from svc_migration_steps where name = '0002_kfill.sql'`);
    expect(JSON.parse(stored.cursor)).toEqual([expect.stringMatching(/^t\d$/), expect.stringMatching(/^[0-9a-f]{26}$/)]);
    expect(await value<number>(`select count(*)::int as v from "kfill" where "kind" is not null`)).toBe(Number(stored.rows_done));

    expect(await migrate(db, [set], { settings: { batchRows: 3_000, batchPauseMs: 0 } })).toEqual(['schema/0002_kfill.sql']);
    expect(await value<number>(`select count(*)::int as v from "kfill" where "kind" is distinct from 'k' || "n" or "email" not like '%.com+'`)).toBe(0);
    expect(Number(await value<string>(`select rows_done::text as v from svc_migration_steps where name = '0002_kfill.sql'`))).toBe(40_000);
  });
});
