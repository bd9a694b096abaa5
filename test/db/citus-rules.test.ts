/**
 * The Citus rules without a Citus node (ADR 025, docs/scaling.md): the stub
 * (test/helpers/citus-stub.sql) stands in for `create_reference_table` and
 * `create_distributed_table` on the real Postgres and refuses what Citus
 * would. A project built with `--target citus` applies every migration
 * (runtime, schema, the distribution) on a fresh database holding the stub.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../generator/index.ts';
import { openDatabase, type Database } from '../../runtime/db/index.ts';
import { migrate } from '../../runtime/db/migrate/index.ts';
import { migrationSets } from '../../runtime/service/start.ts';
import { installCitusStub, placements, runSql } from '../helpers/citus.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { FIXTURES, tempDir } from '../generator/helpers.ts';

const databases: TestDatabase[] = [];
const opened: Database[] = [];
afterAll(async () => {
  for (const db of opened.splice(0)) await db.close();
  for (const db of databases.splice(0)) await db.drop();
});

async function stubbedDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  databases.push(database);
  await installCitusStub(database.url);
  return database;
}

async function migrateAll(url: string, sets: Parameters<typeof migrate>[1]): Promise<string[]> {
  const database = await openDatabase({ url, poolSize: 2 });
  opened.push(database);
  return migrate(database.db, sets);
}

let crm: string;
beforeAll(async () => {
  crm = tempDir('crm-citus');
  const result = await build({ schemaPath: join(FIXTURES, 'crm', 'schema.ts'), outDir: crm, target: 'citus' });
  if (!('written' in result)) throw new Error(`build failed: ${JSON.stringify(result)}`);
}, 120_000);

const REFERENCE = ['svc_users', 'svc_sessions', 'svc_refresh_tokens', 'svc_oauth_identities', 'svc_worker_tokens', 'svc_history_coverage'];
const CRM_TABLES = ['activity', 'company', 'contact', 'deal', 'line_item', 'note', 'product', 'ticket'];

/** Every reference table, then every distributed one in one co-location group, by tenant_id. */
async function expectDistributed(url: string): Promise<void> {
  const rows = await placements(url);
  expect(rows.filter((r) => r.method === 'n').map((r) => r.table)).toEqual(REFERENCE);
  const distributed = rows.filter((r) => r.method === 'h');
  expect(distributed.map((r) => r.table).sort()).toEqual([
    'svc_audit', 'svc_changes', 'svc_events', 'svc_media', 'svc_media_blobs', 'svc_tenant_heads', 'svc_audit_daily', 'svc_audit_daily_actors',
    ...CRM_TABLES, ...CRM_TABLES.map((t) => `${t}_projection`),
  ].sort());
  expect(new Set(distributed.map((r) => `${r.column} ${r.colocation}`)).size).toBe(1);
  expect(distributed[0]).toMatchObject({ table: 'svc_events', column: 'tenant_id' });
}

describe('the CRM fixture built with --target citus', () => {
  it('applies every migration, runtime, schema and the distribution, on a database holding the stub', async () => {
    const database = await stubbedDatabase();
    const applied = await migrateAll(database.url, migrationSets(crm));
    expect(applied.at(-1)).toBe('schema/0002_distribute_for_citus.sql');
    await expectDistributed(database.url);
  });

  it('distributes a hand-made layout 3 of the same tables, in an order the stub accepts', async () => {
    const database = await stubbedDatabase();
    const schemaDir = join(tempDir('crm-citus-l3'), 'migrations');
    mkdirSync(schemaDir);
    const files = readdirSync(join(crm, 'migrations')).sort();
    expect(files).toEqual(['0001_initial.sql', '0002_distribute_for_citus.sql']);
    const sets = [...migrationSets(crm).filter((s) => s.scope !== 'schema'), { scope: 'schema', dir: schemaDir }];
    copyFileSync(join(crm, 'migrations', files[0]), join(schemaDir, files[0]));
    await migrateAll(database.url, sets);
    await runSql(database.url, readFileSync(join(import.meta.dirname, 'citus-layout3-crm.sql'), 'utf8'));
    copyFileSync(join(crm, 'migrations', files[1]), join(schemaDir, files[1]));
    expect(await migrateAll(database.url, sets)).toEqual(['schema/0002_distribute_for_citus.sql']);
    await expectDistributed(database.url);
  });
});

describe('the stub refuses what Citus would', () => {
  let url: string;
  beforeAll(async () => {
    url = (await stubbedDatabase()).url;
    await runSql(url, `
      create table users (id text primary key);
      select create_reference_table('users');
      create table company (tenant_id text not null, id text not null, owner_id text references users (id), primary key (tenant_id, id));
      select create_distributed_table('company', 'tenant_id', colocate_with => 'none');`);
  });
  const refused = (sql: string) => expect(runSql(url, sql)).rejects;

  it('accepts the layout: composite keys, a tenant-leading unique, a composite relation, a relation to a reference table', async () => {
    await runSql(url, `
      create table contact (tenant_id text not null, id text not null, email text, company_id text, owner_id text references users (id),
        deleted_at timestamptz, primary key (tenant_id, id),
        foreign key (tenant_id, company_id) references company (tenant_id, id) on delete set null (company_id));
      create unique index contact_email_tkey on contact (tenant_id, email) where deleted_at is null;
      select create_distributed_table('contact', 'tenant_id', colocate_with => 'company');`);
    expect((await placements(url)).map((p) => `${p.table} ${p.method}`)).toEqual(['users n', 'company h', 'contact h']);
  });

  it('refuses a unique on coalesce(tenant_id, \'\')', async () => {
    await refused(`
      create table product (tenant_id text not null, id text not null, sku text, primary key (tenant_id, id));
      create unique index product_sku_key on product (coalesce(tenant_id, ''), sku);
      select create_distributed_table('product', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: product: unique index product_sku_key does not hold the distribution column tenant_id as a plain key column/);
  });

  it('refuses a nullable tenant_id', async () => {
    await refused(`
      create table note (tenant_id text, id text not null, primary key (id));
      select create_distributed_table('note', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: note: the distribution column tenant_id is nullable: it must be NOT NULL/);
  });

  it('refuses a primary key without tenant_id', async () => {
    await refused(`
      create table tag (tenant_id text not null, id text primary key);
      select create_distributed_table('tag', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: tag: unique index tag_pkey does not hold the distribution column/);
  });

  it('refuses a relation on x_id alone', async () => {
    // A layout-2 leftover on an already distributed parent: a unique on id alone lets Postgres build the key.
    await refused(`
      create unique index company_id_alone on company (id);
      create table deal (tenant_id text not null, id text not null, company_id text references company (id), primary key (tenant_id, id));
      select create_distributed_table('deal', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: deal: foreign key deal_company_id_fkey to company does not hold the distribution column on both sides at the same position/);
  });

  it('refuses a relation whose tenant_id is at another position on each side', async () => {
    await refused(`
      create table visit (tenant_id text not null, id text not null, company_id text, primary key (tenant_id, id),
        foreign key (company_id, tenant_id) references company (tenant_id, id));
      select create_distributed_table('visit', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: visit: foreign key visit_company_id_tenant_id_fkey to company does not hold the distribution column on both sides/);
  });

  it('refuses a table before the table its foreign key references, and a relation to another co-location group', async () => {
    await runSql(url, `
      create table parent (tenant_id text not null, id text not null, primary key (tenant_id, id));
      create table child (tenant_id text not null, id text not null, parent_id text, primary key (tenant_id, id),
        foreign key (tenant_id, parent_id) references parent (tenant_id, id));`);
    await refused(`select create_distributed_table('child', 'tenant_id', colocate_with => 'company')`)
      .toThrow(/citus rule: child: foreign key child_tenant_id_parent_id_fkey references parent, which is neither distributed nor a reference table yet: distribute parent first/);
    await runSql(url, `select create_distributed_table('parent', 'tenant_id', colocate_with => 'none')`);
    await refused(`select create_distributed_table('child', 'tenant_id', colocate_with => 'company')`)
      .toThrow(/citus rule: child: foreign key child_tenant_id_parent_id_fkey references parent, which is not co-located with it/);
  });

  it('refuses a default drawn on the node on a new table: pg_current_xact_id, nextval, an identity', async () => {
    await refused(`
      create table outbox (tenant_id text not null, id text not null, tx xid8 not null default pg_current_xact_id(), primary key (tenant_id, id));
      select create_distributed_table('outbox', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: outbox: column tx defaults to pg_current_xact_id\(\), evaluated on the coordinator/);
    await refused(`
      create table counter (tenant_id text not null, n bigserial, primary key (tenant_id, n));
      select create_distributed_table('counter', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: counter: column n defaults to nextval\('counter_n_seq'::regclass\)/);
    await refused(`
      create table entry (tenant_id text not null, id bigint generated always as identity, primary key (tenant_id, id));
      select create_distributed_table('entry', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: entry: column id defaults to an identity/);
  });

  it('waives svc_events\' and svc_changes\' seq and tx only (the single-node feed, ADR 025 decision 4), not svc_audit\'s id', async () => {
    await runSql(url, `
      create table svc_events (tenant_id text not null, seq bigserial, tx xid8 not null default pg_current_xact_id(), id text not null,
        primary key (tenant_id, seq), unique (tenant_id, id));
      select create_distributed_table('svc_events', 'tenant_id', colocate_with => 'company');`);
    await refused(`
      create table svc_events_copy (tenant_id text not null, seq bigserial, primary key (tenant_id, seq));
      select create_distributed_table('svc_events_copy', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: svc_events_copy: column seq defaults to nextval/);
    // The audit log's id is no exception (audit migration 0005 dropped its identity: the runtime writes the id).
    await refused(`
      create table svc_audit (id bigint generated always as identity, tenant_id text not null, primary key (tenant_id, id));
      select create_distributed_table('svc_audit', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: svc_audit: column id defaults to an identity/);
  });

  it('refuses a reference table that references a table not yet a reference table', async () => {
    await refused(`
      create table roles (id text primary key);
      create table grants (id text primary key, role_id text references roles (id));
      select create_reference_table('grants');`)
      .toThrow(/citus rule: grants: foreign key grants_role_id_fkey references roles, which is not a reference table \(yet\)/);
  });
});
