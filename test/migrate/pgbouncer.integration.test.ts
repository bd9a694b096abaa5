/**
 * The runner through pgbouncer in transaction mode: no session lock, every
 * decision in a short transaction under pg_advisory_xact_lock, so two runners
 * behind the pooler apply every step once and nothing stays locked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startPgbouncer, type Pgbouncer } from '../helpers/pgbouncer.ts';
import { migrate } from '../../runtime/db/migrate/index.ts';
import type { Db } from '../../runtime/db/types.ts';
import { modelTable, openDb, schemaSet } from './helpers.ts';

let bouncer: Pgbouncer;
let database: TestDatabase;
let direct: Db;

beforeAll(async () => {
  bouncer = await startPgbouncer({ poolSize: 2 });
  database = await createTestDatabase('svc_t_migrate_pool');
  direct = openDb(database.url);
});
afterAll(async () => {
  await direct?.$pool.end();
  await database?.drop();
  await bouncer?.stop();
});

const value = async <T>(query: string): Promise<T> => (await direct.one<{ v: T }>(query)).v;

describe('behind pgbouncer in transaction mode', { timeout: 60_000 }, () => {
  it('two runners apply every step kind once, and leave no lock behind', async () => {
    const set = schemaSet({
      '0001_deal.sql': modelTable('deal', 10_000),
      '0002_steps.sql': `-- svc-gen migration 0002: Deal.kind filled, Deal.email indexed
-- step 1 transactional: default of Deal.kind
alter table "deal" alter column "kind" set default 'open';
-- step 2 backfill "deal": fill Deal.kind, count the passes in Deal.n
update "deal" set "kind" = 'open', "n" = "n" + 100000 where "kind" is null or "kind" = 'open';
-- step 3 preflight: no duplicate Deal.email
select "email" from "deal" group by "email" having count(*) > 1;
-- step 4 online: unique index on Deal.email
create unique index concurrently if not exists "deal_email_key" on "deal" ("email");
`,
    });
    const pooled = [openDb(bouncer.pooled(database.url), 2), openDb(bouncer.pooled(database.url), 2)];
    try {
      const settings = { batchRows: 500, batchPauseMs: 0 };
      const runs = await Promise.all(pooled.map((db) => migrate(db, [set], { settings })));
      expect([...new Set(runs.flat())].sort()).toEqual(['schema/0001_deal.sql', 'schema/0002_steps.sql']);
      expect(await value<number>(`select count(*)::int as v from "deal" where "kind" <> 'open' or "n" not between 100001 and 110000`)).toBe(0);
      expect(await value<boolean>(`select indisvalid as v from pg_index where indexrelid = to_regclass('deal_email_key')`)).toBe(true);
      expect(await value<number>(`select count(*)::int as v from svc_migration_steps where state <> 'done'`)).toBe(0);
      expect(await value<number>(`select count(*)::int as v from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())`)).toBe(0);
      const settingsLeft = await direct.manyOrNone(`select pid from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and state = 'idle in transaction'`);
      expect(settingsLeft).toEqual([]);
    } finally {
      await Promise.all(pooled.map((db) => db.$pool.end()));
    }
  });
});
