/**
 * The generated SQL runs: migrations (by the real runner, each step in the
 * mode its step line names) and projections, on the real Postgres.
 */
import pg from 'pg';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { deployment, type Deployment } from '../helpers/deploy.ts';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, buildOk, copySchema, tempDir } from './helpers.ts';

/** The few calls these tests make, over one real connection. */
class Sql {
  constructor(private readonly client: pg.Client) {}
  async exec(sql: string): Promise<void> {
    await this.client.query(sql);
  }
  async query<T extends pg.QueryResultRow>(sql: string): Promise<{ rows: T[] }> {
    return this.client.query<T>(sql);
  }
}

let database: TestDatabase;
let client: pg.Client;
let db: Sql;
let schemaCount = 0;
const deployments: Deployment[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
  db = new Sql(client);
});
afterAll(async () => {
  for (const d of deployments.splice(0)) await d.close();
  await client.end();
  await database.drop();
});

const filesOf = (outDir: string) => readdirSync(join(outDir, 'migrations')).sort().map((f) => join(outDir, 'migrations', f));

/** A fresh Postgres schema per project so the fixtures do not collide. */
async function applyProject(outDir: string): Promise<Deployment> {
  const schema = `t${++schemaCount}`;
  await db.exec(`create schema ${schema}; set search_path to ${schema};`);
  const deployed = deployment(database.url, schema);
  deployments.push(deployed);
  await deployed.migrate(filesOf(outDir));
  for (const file of readdirSync(join(outDir, 'projections')).sort()) {
    await db.exec(readFileSync(join(outDir, 'projections', file), 'utf8'));
  }
  return deployed;
}

describe('generated SQL', () => {
  it('crm: migrations and projections apply; quoting, checks and tenant-unique indexes work', async () => {
    const outDir = tempDir('sql-crm');
    await buildOk({ schemaPath: join(FIXTURES, 'crm', 'schema.ts'), outDir });
    await applyProject(outDir);
    await db.exec(`insert into "company" ("id", "name") values ('c1', 'Acme')`);
    await db.exec(`insert into "deal" ("id", "title", "amount", "company_id") values ('d1', 'Big', 10, 'c1')`);
    await db.exec(`insert into "product" ("id", "name", "sku", "price") values ('p1', 'Widget', 'W-1', 5)`);
    await db.exec(`insert into "line_item" ("id", "deal_id", "product_id", "order") values ('l1', 'd1', 'p1', 1)`);
    const row = await db.query<{ stage: string; quantity: number; order: number }>(`select d."stage", l."quantity", l."order" from "line_item" l join "deal" d on d."id" = l."deal_id"`);
    expect(row.rows).toEqual([{ stage: 'lead', quantity: 1, order: 1 }]);
    await expect(db.exec(`update "deal" set "stage" = 'nope'`)).rejects.toThrow(/check/);
    await expect(db.exec(`insert into "company" ("id", "name") values ('c2', 'Acme')`)).rejects.toThrow(/unique/);
    await db.exec(`insert into "company" ("id", "name", "tenant_id") values ('c3', 'Acme', 't1')`);
    await db.exec(`update "company" set "deleted_at" = now() where "id" = 'c1'; insert into "company" ("id", "name") values ('c4', 'Acme')`);
    await expect(db.exec(`delete from "company" where "id" = 'c1'`)).rejects.toThrow(/foreign key/);
    await db.exec(`insert into "ticket" ("id", "subject", "user") values ('t1', 'Help', 'u1')`);
    await db.exec(`insert into "ticket_projection" ("id", "user", "priority") values ('t1', 'u1', 'high')`);
  });

  it('history: v1 -> v4 apply in order on existing rows, the v4 rename and type change by expand/contract', async () => {
    const schemaPath = copySchema('history/v1');
    const outDir = tempDir('sql-history');
    await buildOk({ schemaPath, outDir, name: 'history' });
    const deployed = await applyProject(outDir);
    await db.exec(`insert into "company" ("id", "name") values ('c1', 'Acme'); insert into "contact" ("id", "name", "email", "company_id") values ('p1', 'Ann', 'a@x.io', 'c1')`);
    for (const v of ['v2', 'v3', 'v4']) {
      writeFileSync(schemaPath, readFileSync(join(FIXTURES, 'history', v, 'schema.ts'), 'utf8'));
      const result = await buildOk({ schemaPath, outDir, name: 'history' });
      const files = [result.migration, result.contract].flatMap((m) => (m ? [join(outDir, m.path)] : []));
      expect((await deployed.migrate(files)).applied).toHaveLength(files.length);
      if (v === 'v3') await db.exec(`insert into "deal" ("id", "title", "amount", "company_id") values ('d1', 'Big', 12.5, 'c1')`);
    }
    const contact = await db.query(`select "stage", "vip" from "contact"`);
    expect(contact.rows).toEqual([{ stage: 'lead', vip: null }]);
    await db.exec(`update "contact" set "stage" = 'won'`);
    const deal = await db.query(`select "name", "amount_v2" from "deal"`);
    expect(deal.rows).toEqual([{ name: 'Big', amount_v2: '12.5' }]);
  });
});
