/**
 * SVC_DISTRIBUTED_CHECK=1 on the driver, against the real Postgres: a
 * statement that would be multi-shard on Citus, or a transaction that touches
 * two tenants, is refused before it is sent, naming the statement and where
 * our code built it; single-tenant work and coordinator tables pass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anyRows, openDatabase, type Database } from '../../runtime/db/index.ts';
import { installedCheck } from '../../runtime/db/distributed/index.ts';
import { compile, sql } from '../../runtime/sql/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let database: TestDatabase;
let opened: Database;
const before = process.env.SVC_DISTRIBUTED_CHECK;

beforeAll(async () => {
  process.env.SVC_DISTRIBUTED_CHECK = '1';
  database = await createTestDatabase();
  opened = await openDatabase({ url: database.url, poolSize: 4 });
  await opened.db.none(`create table deal (id text primary key, tenant_id text, amount int);
    create table svc_jobs (id text primary key, tenant_id text, status text)`);
});
afterAll(async () => {
  if (before === undefined) delete process.env.SVC_DISTRIBUTED_CHECK;
  else process.env.SVC_DISTRIBUTED_CHECK = before;
  await opened?.close();
  await database?.drop();
});

const deals = (tenant: string) => compile(sql`select id from deal where tenant_id = ${sql.value(tenant, 'text')}`);
const insertDeal = (id: string, tenant: string) =>
  compile(sql`insert into deal (id, tenant_id, amount) values (${sql.value(id, 'text')}, ${sql.value(tenant, 'text')}, 1)`);

describe('SVC_DISTRIBUTED_CHECK=1', () => {
  it('sends a single-tenant statement and one on a coordinator table', async () => {
    await opened.db.none(insertDeal('d1', 'acme'));
    expect(await opened.db.any(deals('acme'))).toEqual([{ id: 'd1' }]);
    expect(await anyRows(opened.db, deals('acme'))).toEqual([{ id: 'd1' }]);
    expect(await opened.db.any(`select id from svc_jobs where status = 'queued'`)).toEqual([]);
  });

  it('refuses a cross-tenant statement before it runs, naming it and its call site', async () => {
    const everyTenant = compile(sql`update deal set amount = amount + 1 where amount > ${sql.value(0, 'int')}`);
    const refused = await opened.db.none(everyTenant).then(() => null, (error: Error) => error);
    expect(refused?.message).toMatch(/deal is read or written without a tenant_id filter/);
    expect(refused?.message).toContain('statement: update deal set amount = amount + 1');
    expect(refused?.message).toMatch(/built at: .*distributed-check\.integration\.test\.ts/);
    expect((await opened.db.one(`select amount from deal where tenant_id = 'acme'`)).amount).toBe(1);

    const twoTenants = compile(sql`select id from deal where tenant_id = any(${sql.value(['acme', 'globex'], 'text[]')})`);
    await expect(anyRows(opened.db, twoTenants)).rejects.toThrow(/one statement touches 2 tenants/);
  });

  it('refuses the statement that brings a second tenant into a transaction, and the transaction rolls back', async () => {
    const transaction = opened.db.tx(async (t) => {
      await t.none(insertDeal('d2', 'acme'));
      await t.none(insertDeal('d3', 'globex'));
    });
    await expect(transaction).rejects.toThrow(/the transaction touches 2 tenants/);
    expect(await opened.db.any(`select id from deal where tenant_id = 'acme' order by id`)).toEqual([{ id: 'd1' }]);
    expect(await opened.db.any(`select id from deal where tenant_id = 'globex'`)).toEqual([]);
    // The next transaction starts afresh: one tenant each is fine.
    await opened.db.tx(async (t) => t.none(insertDeal('d3', 'globex')));
    // The process's check is shared by the test files of one worker (the suite runs with it on): this file's own.
    const ours = installedCheck()?.violations.filter((v) => v.site.includes('distributed-check.integration.test.ts'));
    expect(ours?.map((v) => v.kind)).toEqual(['unpinned', 'two-tenants', 'two-tenants']);
  });
});
