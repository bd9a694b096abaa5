/**
 * The runner on a real Postgres: every step kind as the format says, the
 * lock report, a failing preflight, the lock-queue case and the contract gate.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { formatPlan, migrate, migrationStatus, planMigrations, runMigrations } from '../../runtime/db/migrate/index.ts';
import { MAX_BACKOFF_MS } from '../../runtime/db/migrate/retry.ts';
import type { Db } from '../../runtime/db/types.ts';
import { modelTable, openDb, recordingLog, schemaSet } from './helpers.ts';

const REALTIME = { scope: 'runtime:realtime', dir: fileURLToPath(new URL('../../runtime/realtime/migrations/', import.meta.url)) };
/** Batches of exactly batchRows: a target this long never shrinks them, however loaded the machine (sizing has its own tests). */
const FAST = { batchRows: 5_000, batchPauseMs: 0, batchTargetMs: 60_000 };

const REQUIRED = `-- svc-gen migration 0002: Contact.kind required, Contact.email unique
-- step 1 transactional: set the default of Contact.kind
alter table "contact" alter column "kind" set default 'lead';
-- step 2 backfill "contact": fill Contact.kind
update "contact" set "kind" = 'lead' where "kind" is null;
-- step 3 transactional: check Contact.kind is not null, not valid
alter table "contact" add constraint "contact_kind_nn" check ("kind" is not null) not valid;
-- step 4 online: validate the check
alter table "contact" validate constraint "contact_kind_nn";
-- step 5 transactional: Contact.kind not null, the check dropped
alter table "contact" alter column "kind" set not null;
alter table "contact" drop constraint "contact_kind_nn";
-- step 6 preflight: no duplicate Contact.email
select "email", count(*) as duplicates from "contact" group by "email" having count(*) > 1;
-- step 7 online: unique index on Contact.email
create unique index concurrently if not exists "contact_email_key" on "contact" ("email");
`;

let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase('svc_t_migrate');
  db = openDb(database.url, 4);
});
afterAll(async () => {
  await db?.$pool.end();
  await database?.drop();
});

const value = async <T>(query: string): Promise<T> => (await db.one<{ v: T }>(query)).v;

describe('the step kinds', () => {
  const set = schemaSet({ '0001_contact.sql': modelTable('contact', 30_000) });

  it('prints the lock of each pending step before applying it', async () => {
    await migrate(db, [set]);
    set.add('0002_required.sql', REQUIRED);
    const plan = await planMigrations(db, [set]);
    expect(plan.map((p) => [p.step, p.kind, p.lock.lock, p.lock.brief, p.lock.scans, p.online])).toEqual([
      [1, 'transactional', 'ACCESS EXCLUSIVE', true, false, false],
      [2, 'backfill', 'ROW EXCLUSIVE', false, false, true],
      [3, 'transactional', 'ACCESS EXCLUSIVE', true, false, false],
      [4, 'online', 'SHARE UPDATE EXCLUSIVE', false, true, true],
      [5, 'transactional', 'ACCESS EXCLUSIVE', true, false, false],
      [6, 'preflight', 'ACCESS SHARE', false, true, true],
      [7, 'online', 'SHARE UPDATE EXCLUSIVE', false, true, true],
    ]);
    const text = formatPlan(plan);
    expect(text).toContain('schema/0002_required.sql step 5 transactional: Contact.kind not null, the check dropped');
    expect(text).toContain('lock: ACCESS EXCLUSIVE on contact (brief, catalog only; blocks reads and writes for milliseconds)');
    expect(text).toMatch(/step 2 backfill: fill Contact.kind\n {2}lock: ROW EXCLUSIVE on contact \(row locks per batch; blocks no reads or writes\)\n {2}rewrites table: no; scans table: no; online: yes; rows: ~30,000/);
  });

  it('runs them in order: backfill in keyset batches then vacuum, online steps outside a transaction, each recorded', async () => {
    const log = recordingLog();
    const applied = await migrate(db, [set], { log, settings: FAST });
    expect(applied).toEqual(['schema/0002_required.sql']);
    const steps = await db.manyOrNone<{ step: number; kind: string; state: string; rows_done: number }>(
      `select step, kind, state, rows_done from svc_migration_steps where name = '0002_required.sql' order by step`);
    expect(steps.map((s) => [s.step, s.kind, s.state])).toEqual([
      [1, 'transactional', 'done'], [2, 'backfill', 'done'], [3, 'transactional', 'done'], [4, 'online', 'done'],
      [5, 'transactional', 'done'], [6, 'preflight', 'done'], [7, 'online', 'done']]);
    expect(Number(steps[1].rows_done)).toBe(30_000);
    // Six batches of 5,000 rows, a transaction each.
    expect(await value<number>(`select count(distinct xmin::text)::int as v from "contact"`)).toBe(6);
    expect(await value<number>(`select count(*)::int as v from "contact" where "kind" is distinct from 'lead'`)).toBe(0);
    expect(await value<string>(`select attnotnull::text as v from pg_attribute where attrelid = 'contact'::regclass and attname = 'kind'`)).toBe('true');
    expect(await value<boolean>(`select indisvalid as v from pg_index where indexrelid = 'contact_email_key'::regclass`)).toBe(true);
    expect(await value<number>(`select count(*)::int as v from pg_constraint where conname = 'contact_kind_nn'`)).toBe(0);
    expect(await value<boolean>(`select last_vacuum is not null as v from pg_stat_user_tables where relname = 'contact'`)).toBe(true);
    expect(log.lines.some((l) => /backfill of contact: about 30000 of ~30000 rows passed, 30000 updated/.test(l.message))).toBe(true);
    expect(await value<number>(`select count(*)::int as v from svc_migrations where name = '0002_required.sql'`)).toBe(1);
    expect(await migrate(db, [set])).toEqual([]);
  });

  it('skips a backfill of an empty table at once', async () => {
    const empty = schemaSet({
      '0001_note.sql': 'create table "note" ("id" text primary key, "body" text);\n',
      '0002_fill.sql': '-- step 1 backfill "note": fill Note.body\nupdate "note" set "body" = \'\' where "body" is null;\n',
    });
    const log = recordingLog();
    expect(await migrate(db, [empty], { log })).toEqual(['schema/0001_note.sql', 'schema/0002_fill.sql']);
    expect(log.lines.map((l) => l.message)).toContain('schema/0002_fill.sql step 1 (backfill: fill Note.body): table note is empty, nothing to backfill');
  });
});

describe('a column with a volatile default (the schema language cannot declare one: docs/migrations.md)', () => {
  it('is added without a rewrite: the column and its default in the catalog, then a batched backfill', async () => {
    const set = schemaSet({ '0001_token.sql': modelTable('token', 12_000) });
    await migrate(db, [set]);
    set.add('0002_token.sql', `-- svc-gen migration 0002: Token.token
-- step 1 transactional: Token.token, new rows get a fresh one
alter table "token" add column "token" uuid;
alter table "token" alter column "token" set default gen_random_uuid();
-- step 2 backfill "token": fill Token.token
update "token" set "token" = gen_random_uuid() where "token" is null;
`);
    const plan = await planMigrations(db, [set]);
    expect(plan.map((p) => [p.step, p.kind, p.lock.lock, p.lock.brief, p.lock.rewrites])).toEqual([
      [1, 'transactional', 'ACCESS EXCLUSIVE', true, false],
      [2, 'backfill', 'ROW EXCLUSIVE', false, false],
    ]);
    const file = async () => value<string>(`select pg_relation_filenode('token')::text as v`);
    const before = await file();
    expect(await migrate(db, [set], { settings: FAST })).toEqual(['schema/0002_token.sql']);
    expect(await file()).toBe(before); // not rewritten
    await db.none(`insert into "token" ("id", "tenant_id", "n") values ('new', 't', 0)`);
    expect(await value<number>(`select count(distinct "token")::int as v from "token" where "token" is not null`)).toBe(12_001);
  });
});

describe('a unique preflight with duplicates', () => {
  it('fails naming the duplicates and changes nothing; applies once they are gone', async () => {
    const set = schemaSet({
      '0001_person.sql': `${modelTable('person', 1_000)}update "person" set "email" = 'twice@example.com' where "n" in (3, 4);\n`,
    });
    await migrate(db, [set]);
    set.add('0002_unique.sql', `-- svc-gen migration 0002: Person.email unique
-- step 1 transactional: Person.kind default
alter table "person" alter column "kind" set default 'x';
-- step 2 preflight: no duplicate Person.email
select "email", count(*)::int as duplicates from "person" group by "email" having count(*) > 1;
-- step 3 online: unique index on Person.email
create unique index concurrently if not exists "person_email_key" on "person" ("email");
`);
    await expect(migrate(db, [set])).rejects.toThrow(
      'schema/0002_unique.sql step 2 (preflight: no duplicate Person.email) failed: 1 offending row(s), first 1: {"email":"twice@example.com","duplicates":2}; '
      + 'nothing of this migration from this step on was applied');
    expect(await value<number>(`select count(*)::int as v from pg_class where relname = 'person_email_key'`)).toBe(0);
    expect(await value<number>(`select count(*)::int as v from svc_migrations where name = '0002_unique.sql'`)).toBe(0);
    expect((await migrationStatus(db, [set])).pending).toEqual(['schema/0002_unique.sql']);
    await db.none(`update "person" set "email" = 'once@example.com' where "n" = 4`);
    expect(await migrate(db, [set])).toEqual(['schema/0002_unique.sql']);
    expect(await value<boolean>(`select indisvalid as v from pg_index where indexrelid = 'person_email_key'::regclass`)).toBe(true);
  });
});

describe('the lock queue', () => {
  it('never stalls other clients behind a waiting step, and ends within lock_timeout plus one retry after the reader', async () => {
    const set = schemaSet({ '0001_queue.sql': modelTable('queue', 2_000) });
    await migrate(db, [set]);
    set.add('0002_note.sql', '-- svc-gen migration 0002: Queue.note\nalter table "queue" add column "note" text;\n');
    const reader = openDb(database.url, 1);
    const traffic = openDb(database.url, 2);
    try {
      const lockTimeoutMs = 100;
      const log = recordingLog();
      let release!: () => void;
      const readerDone = new Promise<number>((resolve) => {
        void reader.tx(async (tx) => {
          await tx.any(`select "id" from "queue" where "n" < 10 /* the long report */`);
          await new Promise<void>((r) => (release = r));
        }).then(() => resolve(Date.now()));
      });
      await until(() => release !== undefined);
      let running = true;
      let worstMs = 0;
      let failures = 0;
      const clients = [0, 1].map(async (c) => {
        for (let i = 0; running; i++) {
          const started = Date.now();
          try {
            if (i % 2 === 0) await traffic.any(`select * from "queue" where "id" = lpad(to_hex(${(i % 2000) + 1}), 26, '0')`);
            else await traffic.none(`update "queue" set "n" = "n" where "id" = lpad(to_hex(${c * 1000 + (i % 1000) + 1}), 26, '0')`);
          } catch {
            failures++;
          }
          worstMs = Math.max(worstMs, Date.now() - started);
        }
      });
      const migrated = migrate(db, [set], { log, settings: { lockTimeoutMs } }).then((applied) => ({ applied, at: Date.now() }));
      const heldFrom = Date.now();
      // Attempt 7: the jittered backoffs before it (at least half of 100, 200, ..., capped at 1 s) keep the reader
      // holding the table over 1.5 s, which the assertion below relies on (attempt 5 could come at 1.25 s).
      const wait = await log.waitFor(/lock not granted/, 7);
      expect(wait.message).toMatch(/^schema\/0002_note.sql: lock not granted within 100 ms \(attempt 7\), retry in \d+ ms; held by pid \d+ \(client backend, idle in transaction for [\d.]+ s\): select "id" from "queue" where "n" < 10/);
      release();
      const readerEnded = await readerDone;
      const { applied, at } = await migrated;
      running = false;
      await Promise.all(clients);
      expect(applied).toEqual(['schema/0002_note.sql']);
      expect(at - readerEnded).toBeLessThan(lockTimeoutMs + MAX_BACKOFF_MS + 300);
      expect(failures).toBe(0);
      // The reader held the table for seconds; behind a plain ALTER every client would have waited as long.
      expect(readerEnded - heldFrom).toBeGreaterThan(1_500);
      expect(worstMs).toBeLessThan(800);
    } finally {
      await reader.$pool.end();
      await traffic.$pool.end();
    }
  });
});

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

describe('the contract gate', () => {
  it('holds a contract file back while a live instance of an older build is registered, and applies it once it is gone', async () => {
    const set = schemaSet({
      '0001_account.sql': 'create table "account" ("id" text primary key, "old_name" text, "name" text);\n',
      '0002_expand.sql': '-- svc-gen migration 0002: Account.old_name renamed to name (expand)\nupdate "account" set "name" = "old_name";\n',
    });
    await migrate(db, [REALTIME, set]);
    await db.none(`insert into svc_realtime_instances (instance_id, schema_migration, ttl_ms) values ('old-build', '0002_expand.sql', 60000),
      ('new-build', '0003_contract.sql', 60000)`);
    await db.none(`insert into svc_realtime_instances (instance_id, schema_migration, ttl_ms, seen_at) values ('dead', '0001_account.sql', 60000, now() - interval '1 hour')`);
    set.add('0003_contract.sql', '-- svc-gen migration 0003: drop Account.old_name\n-- contract of 0002: drop Account.old_name\n-- step 1 transactional: drop Account.old_name\nalter table "account" drop column "old_name";\n');
    set.add('0004_later.sql', 'alter table "account" add column "later" text;\n');
    const log = recordingLog();
    const held = await runMigrations(db, [REALTIME, set], { log });
    expect(held.applied).toEqual([]);
    expect(held.heldBack?.file).toBe('schema/0003_contract.sql');
    expect(held.heldBack?.holders.map((h) => h.instance_id)).toEqual(['old-build']);
    expect(log.lines.map((l) => l.message)).toEqual([expect.stringMatching(
      /^schema\/0003_contract.sql is a contract migration, held back: 1 live instance\(s\) still run an older schema: old-build \(newest migration 0002_expand.sql, since .*\); it applies once they are gone/)]);
    expect(await migrationStatus(db, [REALTIME, set])).toMatchObject({ pending: [], heldBack: ['schema/0003_contract.sql', 'schema/0004_later.sql'] });
    expect(await value<number>(`select count(*)::int as v from pg_attribute where attrelid = 'account'::regclass and attname = 'old_name' and not attisdropped`)).toBe(1);
    expect(formatPlan(await planMigrations(db, [REALTIME, set]))).toMatch(/^held back: schema\/0003_contract.sql is a contract migration/);

    await db.none(`delete from svc_realtime_instances where instance_id = 'old-build'`);
    expect(await migrate(db, [REALTIME, set])).toEqual(['schema/0003_contract.sql', 'schema/0004_later.sql']);
    expect(await value<number>(`select count(*)::int as v from pg_attribute where attrelid = 'account'::regclass and attname = 'old_name' and not attisdropped`)).toBe(0);
  });
});

describe('two runners at once', () => {
  it('run each claimed step once: a non-idempotent backfill adds once per row', async () => {
    const set = schemaSet({ '0001_pair.sql': modelTable('pair', 20_000) });
    await migrate(db, [set]);
    set.add('0002_both.sql', `-- svc-gen migration 0002: two runners
-- step 1 online: index Pair.n
create index concurrently if not exists "pair_n_idx" on "pair" ("n");
-- step 2 backfill "pair": add a million to Pair.n, once
update "pair" set "n" = "n" + 1000000 where true;
`);
    const other = openDb(database.url, 2);
    try {
      const settings = { batchRows: 1_000, batchPauseMs: 0 };
      const [a, b] = await Promise.all([migrate(db, [set], { settings }), migrate(other, [set], { settings })]);
      expect([...a, ...b]).toContain('schema/0002_both.sql');
      expect(await value<number>(`select count(*)::int as v from "pair" where "n" not between 1000001 and 1020000`)).toBe(0);
      expect(await value<boolean>(`select indisvalid as v from pg_index where indexrelid = 'pair_n_idx'::regclass`)).toBe(true);
    } finally {
      await other.$pool.end();
    }
  });
});
