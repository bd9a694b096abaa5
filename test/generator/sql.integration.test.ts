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
    // Layout 3: the global scope is stored as '' (ADR 025 decision 2); a tenant is never left null.
    await db.exec(`insert into "company" ("id", "name", "tenant_id") values ('c1', 'Acme', '')`);
    await db.exec(`insert into "deal" ("id", "title", "amount", "company_id", "tenant_id") values ('d1', 'Big', 10, 'c1', '')`);
    await db.exec(`insert into "product" ("id", "name", "sku", "price", "tenant_id") values ('p1', 'Widget', 'W-1', 5, '')`);
    await db.exec(`insert into "line_item" ("id", "deal_id", "product_id", "order", "tenant_id") values ('l1', 'd1', 'p1', 1, '')`);
    const row = await db.query<{ stage: string; quantity: number; order: number }>(`select d."stage", l."quantity", l."order" from "line_item" l join "deal" d on d."tenant_id" = l."tenant_id" and d."id" = l."deal_id"`);
    expect(row.rows).toEqual([{ stage: 'lead', quantity: 1, order: 1 }]);
    await expect(db.exec(`update "deal" set "stage" = 'nope'`)).rejects.toThrow(/check/);
    await expect(db.exec(`insert into "company" ("id", "name", "tenant_id") values ('c2', 'Acme', '')`)).rejects.toThrow(/unique/);
    await expect(db.exec(`insert into "company" ("id", "name") values ('c2', 'Acme')`)).rejects.toThrow(/null value in column "tenant_id"/);
    await db.exec(`insert into "company" ("id", "name", "tenant_id") values ('c3', 'Acme', 't1')`);
    await db.exec(`update "company" set "deleted_at" = now() where "id" = 'c1'; insert into "company" ("id", "name", "tenant_id") values ('c4', 'Acme', '')`);
    await expect(db.exec(`delete from "company" where "id" = 'c1'`)).rejects.toThrow(/foreign key/);
    await db.exec(`insert into "ticket" ("id", "subject", "user", "tenant_id") values ('t1', 'Help', 'u1', '')`);
    await db.exec(`insert into "ticket_projection" ("id", "user", "priority", "tenant_id") values ('t1', 'u1', 'high', '')`);
    await expect(db.exec(`insert into "ticket_projection" ("id", "user", "priority", "tenant_id") values ('t1', 'u1', 'low', '')`)).rejects.toThrow(/ticket_projection_pkey/);
    await db.exec(`insert into "ticket_projection" ("id", "user", "priority", "tenant_id") values ('t1', 'u1', 'low', 't1')`);
  });

  it('crm: a relation is a key of the row\'s own tenant; an optional parent\'s delete is refused until its references are cleared (the service clears them)', async () => {
    const outDir = tempDir('sql-crm-keys');
    await buildOk({ schemaPath: join(FIXTURES, 'crm', 'schema.ts'), outDir });
    await applyProject(outDir);
    await db.exec(`insert into "company" ("id", "name", "tenant_id") values ('c1', 'Acme', 't1'), ('c2', 'Beta', 't2')`);
    // The same id may exist in two tenants: the key is (tenant_id, id).
    await db.exec(`insert into "company" ("id", "name", "tenant_id") values ('c1', 'Acme', 't2')`);
    await db.exec(`insert into "contact" ("id", "first_name", "email", "company_id", "tenant_id") values ('p1', 'Ann', 'a@x.io', 'c1', 't1')`);
    await expect(db.exec(`insert into "contact" ("id", "first_name", "email", "company_id", "tenant_id") values ('p2', 'Bob', 'b@x.io', 'c2', 't1')`)).rejects.toThrow(/contact_company_id_tfkey/);
    await expect(db.exec(`update "contact" set "company_id" = 'c2' where "id" = 'p1'`)).rejects.toThrow(/contact_company_id_tfkey/);
    // On delete no action (ADR 025: Citus refuses set null on a key holding tenant_id): the hard delete clears the reference first.
    await expect(db.exec(`delete from "company" where "tenant_id" = 't1' and "id" = 'c1'`)).rejects.toThrow(/contact_company_id_tfkey/);
    await db.exec(`begin; update "contact" set "company_id" = null where "tenant_id" = 't1' and "company_id" = any(array['c1']); delete from "company" where "tenant_id" = 't1' and "id" = 'c1'; commit`);
    expect((await db.query(`select "tenant_id", "company_id" from "contact" where "id" = 'p1'`)).rows).toEqual([{ tenant_id: 't1', company_id: null }]);
    const keys = await db.query<{ def: string }>(`select pg_get_constraintdef(oid) as def from pg_constraint where conrelid = 'contact'::regclass and contype in ('p', 'f') order by contype, conname`);
    expect(keys.rows.map((r) => r.def)).toEqual([
      'FOREIGN KEY (tenant_id, company_id) REFERENCES company(tenant_id, id)',
      'PRIMARY KEY (tenant_id, id)',
    ]);
  });

  it('history: v1 -> v4 apply in order on existing rows, the v4 rename and type change by expand/contract', async () => {
    const schemaPath = copySchema('history/v1');
    const outDir = tempDir('sql-history');
    await buildOk({ schemaPath, outDir, name: 'history' });
    const deployed = await applyProject(outDir);
    await db.exec(`insert into "company" ("id", "name", "tenant_id") values ('c1', 'Acme', ''); insert into "contact" ("id", "name", "email", "company_id", "tenant_id") values ('p1', 'Ann', 'a@x.io', 'c1', '')`);
    for (const v of ['v2', 'v3', 'v4']) {
      writeFileSync(schemaPath, readFileSync(join(FIXTURES, 'history', v, 'schema.ts'), 'utf8'));
      const result = await buildOk({ schemaPath, outDir, name: 'history' });
      const files = [result.migration, result.contract].flatMap((m) => (m ? [join(outDir, m.path)] : []));
      expect((await deployed.migrate(files)).applied).toHaveLength(files.length);
      if (v === 'v3') await db.exec(`insert into "deal" ("id", "title", "amount", "company_id", "tenant_id") values ('d1', 'Big', 12.5, 'c1', '')`);
    }
    const contact = await db.query(`select "stage", "vip" from "contact"`);
    expect(contact.rows).toEqual([{ stage: 'lead', vip: null }]);
    await db.exec(`update "contact" set "stage" = 'won'`);
    const deal = await db.query(`select "name", "amount_v2" from "deal"`);
    expect(deal.rows).toEqual([{ name: 'Big', amount_v2: '12.5' }]);
  });
});
