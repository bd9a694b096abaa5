/**
 * The Citus rules without a Citus node (ADR 025, docs/scaling.md): the stub
 * (test/helpers/citus-stub.sql) stands in for `create_reference_table` and
 * `create_distributed_table` on the real Postgres and refuses what Citus
 * would. A project built with `--target citus` applies every migration
 * (runtime, schema, the distribution) on a fresh database holding the stub;
 * so does its later build that adds models (fixtures/crm-grown), on top.
 */
import { copyFileSync, cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../generator/index.ts';
import { openDatabase, type Database } from '../../runtime/db/index.ts';
import { migrate } from '../../runtime/db/migrate/index.ts';
import { parseMigration } from '../../runtime/db/migrate/parse.ts';
import { migrationSets } from '../../runtime/service/start.ts';
import { installCitusStub, placements, runSql, withoutPlacements } from '../helpers/citus.ts';
import { createTestDatabase, queryOnce, type TestDatabase } from '../helpers/db.ts';
import { FIXTURES, copySchema, tempDir } from '../generator/helpers.ts';

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

/**
 * fixtures/crm-grown, built after the CRM on the same DIR: Segment is new and
 * referenced by the existing Contact, Call is new and belongs to Deal and to
 * Segment. The later migration distributes each new table right after its
 * `create table`, so every key it adds is between co-located distributed tables.
 */
describe('a later build of the distributed CRM that adds models', () => {
  const GROWN = '0003_add_model_call_and_more.sql';
  let outDir: string;
  beforeAll(async () => {
    const dir = tempDir('crm-citus-grown');
    const schemaPath = copySchema('crm', dir);
    outDir = join(dir, 'out');
    const first = await build({ schemaPath, outDir, target: 'citus' });
    if (!('written' in first)) throw new Error(`build failed: ${JSON.stringify(first)}`);
    cpSync(join(FIXTURES, 'crm-grown', 'schema.ts'), schemaPath);
    const later = await build({ schemaPath, outDir, target: 'citus' });
    if (!('written' in later)) throw new Error(`build failed: ${JSON.stringify(later)}`);
    expect(later.written.filter((p) => p.startsWith('migrations/'))).toEqual([`migrations/${GROWN}`]);
  }, 120_000);

  /** A database holding the stub and the first build's migrations (the CRM distributed). */
  async function distributedCrm(): Promise<{ url: string; sets: ReturnType<typeof migrationSets>; schemaDir: string }> {
    const database = await stubbedDatabase();
    const schemaDir = join(tempDir('crm-citus-grown-db'), 'migrations');
    mkdirSync(schemaDir);
    for (const file of ['0001_initial.sql', '0002_distribute_for_citus.sql']) copyFileSync(join(outDir, 'migrations', file), join(schemaDir, file));
    const sets = [...migrationSets(outDir).filter((s) => s.scope !== 'schema'), { scope: 'schema', dir: schemaDir }];
    await migrateAll(database.url, sets);
    return { url: database.url, sets, schemaDir };
  }

  it('applies the first build, then the later one: the new tables distributed, co-located, their keys validated', async () => {
    const { url, sets, schemaDir } = await distributedCrm();
    copyFileSync(join(outDir, 'migrations', GROWN), join(schemaDir, GROWN));
    expect(await migrateAll(url, sets)).toEqual([`schema/${GROWN}`]);
    const rows = await placements(url);
    const added = rows.slice(-4);
    expect(added.map((r) => r.table).sort()).toEqual(['call', 'call_projection', 'segment', 'segment_projection']);
    const anchor = rows.find((r) => r.table === 'svc_events')!;
    for (const row of added) expect(row, row.table).toMatchObject({ method: 'h', column: 'tenant_id', colocation: anchor.colocation });
    const keys = await queryOnce<{ name: string; target: string; validated: boolean }>(url, `select conname as name, confrelid::regclass::text as target, convalidated as validated
      from pg_constraint where contype = 'f' and conname in ('contact_segment_id_tfkey', 'call_deal_id_tfkey', 'call_segment_id_tfkey') order by conname`);
    expect(keys).toEqual([
      { name: 'call_deal_id_tfkey', target: 'deal', validated: true },
      { name: 'call_segment_id_tfkey', target: 'segment', validated: true },
      { name: 'contact_segment_id_tfkey', target: 'segment', validated: true },
    ]);
  });

  it('is refused in the order builds used to write it (the distribution after the keys): the existing table\'s key to the new, still local one', async () => {
    const { url, sets, schemaDir } = await distributedCrm();
    const text = readFileSync(join(outDir, 'migrations', GROWN), 'utf8');
    const { steps } = parseMigration(text);
    const citus = (description: string) => description.startsWith('Citus: ') || description.startsWith('the database has Citus');
    expect(steps.filter((step) => citus(step.description)).length).toBe(7);
    const header = text.slice(0, text.indexOf('\n-- step 1 ') + 1);
    const render = (kept: typeof steps) => header + kept.map((step, i) => `-- step ${i + 1} ${step.kind}${step.table ? ` "${step.table}"` : ''}: ${step.description}\n${step.body}`).join('\n');
    writeFileSync(join(schemaDir, GROWN), render(steps.filter((step) => !citus(step.description))));
    writeFileSync(join(schemaDir, '0004_distribute_segment_call_for_citus.sql'), render(steps.filter((step) => citus(step.description))));
    await expect(migrateAll(url, sets)).rejects
      .toThrow(/citus rule: contact: foreign key contact_segment_id_tfkey references segment, which is neither distributed nor a reference table yet: distribute segment first/);
    expect((await placements(url)).map((r) => r.table)).not.toContain('segment');
  });
});

/**
 * A project distributed by an svc-gen before the feed heads and the audit
 * rollups existed: its 0002 placed five runtime tables, and the runtime's
 * newer tables stayed local (with rows, on a running deployment). A later
 * build adds the migration that places them; the runner applies it on the
 * stub, after which every runtime table is where a fresh distribution puts it.
 */
describe('a later build of a CRM distributed before some runtime tables existed', () => {
  const LATER = ['svc_tenant_heads', 'svc_audit_daily', 'svc_audit_daily_actors'];
  const FILE = '0003_distribute_new_runtime_tables_for_citus.sql';

  it('places them, co-located with svc_events, once', async () => {
    const dir = tempDir('crm-citus-runtime');
    const schemaPath = copySchema('crm', dir);
    const outDir = join(dir, 'out');
    const first = await build({ schemaPath, outDir, target: 'citus' });
    if (!('written' in first)) throw new Error(`build failed: ${JSON.stringify(first)}`);
    const distribution = join(outDir, 'migrations', '0002_distribute_for_citus.sql');
    writeFileSync(distribution, withoutPlacements(readFileSync(distribution, 'utf8'), LATER));
    const database = await stubbedDatabase();
    const sets = migrationSets(outDir);
    await migrateAll(database.url, sets);
    expect((await placements(database.url)).map((r) => r.table)).not.toEqual(expect.arrayContaining([LATER[0]]));
    // A running deployment filled them meanwhile.
    await runSql(database.url, `insert into svc_tenant_heads (tenant_id, last_seq) values ('acme', 3), ('', 7);
      insert into svc_audit_daily (tenant_id, day, action, outcome, entity_type, entries) values ('acme', current_date, 'record.create', 'success', 'Company', 2);
      insert into svc_audit_daily_actors (tenant_id, day, actor_id, entries, last_at) values ('acme', current_date, 'u1', 2, now())`);

    const later = await build({ schemaPath, outDir, target: 'citus' });
    if (!('written' in later)) throw new Error(`build failed: ${JSON.stringify(later)}`);
    expect(later.written).toEqual([`migrations/${FILE}`]);
    expect(await migrateAll(database.url, sets)).toEqual([`schema/${FILE}`]);
    await expectDistributed(database.url);
    expect((await placements(database.url)).slice(-3).map((r) => r.table)).toEqual(LATER);
    expect(await migrateAll(database.url, sets)).toEqual([]);
  });
});

/**
 * A project built with `--target citus` by a layout-3 svc-gen (ADR 025,
 * "Relation keys on Citus"): its distribution comes before the key swap, and
 * Citus refuses it at the first `set null` key. The recovery docs/scaling.md
 * gives (the keys made no action by hand), then today's build (the swap) run
 * by the runner, leaves the project distributed with a fresh build's keys; a
 * project that adds the target only now gets the swap before its distribution.
 */
describe('a layout-3 project with set-null keys', () => {
  const OPTIONAL = [['activity', 'contact_id', 'contact'], ['activity', 'deal_id', 'deal'], ['contact', 'company_id', 'company'], ['deal', 'contact_id', 'contact'], ['ticket', 'company_id', 'company']];
  const keys = (url: string) => queryOnce<{ def: string }>(url, `select conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) as def
    from pg_constraint where contype = 'f' and conrelid::regclass::text in ('${CRM_TABLES.join("', '")}') order by 1`);

  it('built with the target before layout 4: the stub refuses its distribution; after the keys are made no action by hand, the runner finishes it and the swap', async () => {
    const dir = tempDir('crm-citus-layout-3');
    cpSync(join(FIXTURES, 'layout-3', 'crm'), dir, { recursive: true });
    copyFileSync(join(crm, 'migrations', '0002_distribute_for_citus.sql'), join(dir, 'migrations', '0002_distribute_for_citus.sql'));
    const snapshot = join(dir, 'schema.snapshot.json');
    writeFileSync(snapshot, JSON.stringify({ ...JSON.parse(readFileSync(snapshot, 'utf8')), target: 'citus' }));
    const database = await stubbedDatabase();
    const sets = migrationSets(dir);
    // Its runner gone (closed), so that the next run takes over its step at once rather than after the claim's 15 s.
    const refusedRun = await openDatabase({ url: database.url, poolSize: 2 });
    try {
      await expect(migrate(refusedRun.db, sets)).rejects.toThrow(/citus rule: \w+: foreign key \w+_tfkey holds the distribution column tenant_id and is on delete set null/);
    } finally {
      await refusedRun.close();
    }

    await runSql(database.url, OPTIONAL.map(([table, column, target]) => `alter table "${table}" drop constraint "${table}_${column}_tfkey",
      add constraint "${table}_${column}_tfkey" foreign key ("tenant_id", "${column}") references "${target}" ("tenant_id", "id") on delete no action;`).join('\n'));
    const later = await build({ schemaPath: join(FIXTURES, 'crm', 'schema.ts'), outDir: dir, target: 'citus', name: 'crm' });
    if (!('written' in later)) throw new Error(`build failed: ${JSON.stringify(later)}`);
    expect([later.migration?.path, later.contract?.path]).toEqual([
      'migrations/0003_key_activity_contact_on_delete_no_action_and_more.sql',
      'migrations/0004_contract_drop_the_on_delete_set_null_key_of_activity_contact.sql',
    ]);
    expect(await migrateAll(database.url, sets)).toEqual([
      'schema/0002_distribute_for_citus.sql',
      'schema/0003_key_activity_contact_on_delete_no_action_and_more.sql',
      'schema/0004_contract_drop_the_on_delete_set_null_key_of_activity_contact.sql',
    ]);
    await expectDistributed(database.url);
    const converted = await keys(database.url);
    expect(converted.filter((k) => /SET NULL|nfkey/.test(k.def))).toEqual([]);
    const fresh = await stubbedDatabase();
    await migrateAll(fresh.url, migrationSets(crm));
    expect(converted).toEqual(await keys(fresh.url));
  });

  it('adding the target only now: the swap comes before the distribution, which the stub accepts', async () => {
    const dir = tempDir('crm-layout-3-to-citus');
    cpSync(join(FIXTURES, 'layout-3', 'crm'), dir, { recursive: true });
    const result = await build({ schemaPath: join(FIXTURES, 'crm', 'schema.ts'), outDir: dir, target: 'citus', name: 'crm' });
    if (!('written' in result)) throw new Error(`build failed: ${JSON.stringify(result)}`);
    expect(readdirSync(join(dir, 'migrations')).sort()).toEqual([
      '0001_initial.sql',
      '0002_key_activity_contact_on_delete_no_action_and_more.sql',
      '0003_contract_drop_the_on_delete_set_null_key_of_activity_contact.sql',
      '0004_distribute_for_citus.sql',
    ]);
    const database = await stubbedDatabase();
    expect((await migrateAll(database.url, migrationSets(dir))).filter((f) => f.startsWith('schema/'))).toEqual([
      'schema/0001_initial.sql',
      'schema/0002_key_activity_contact_on_delete_no_action_and_more.sql',
      'schema/0003_contract_drop_the_on_delete_set_null_key_of_activity_contact.sql',
      'schema/0004_distribute_for_citus.sql',
    ]);
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
        foreign key (tenant_id, company_id) references company (tenant_id, id) on delete no action);
      create unique index contact_email_tkey on contact (tenant_id, email) where deleted_at is null;
      select create_distributed_table('contact', 'tenant_id', colocate_with => 'company');`);
    expect((await placements(url)).map((p) => `${p.table} ${p.method}`)).toEqual(['users n', 'company h', 'contact h']);
  });

  it('refuses on delete set null and set default on a key holding tenant_id, even with a column list (EnsureSupportedFKeyOnDistKey)', async () => {
    await refused(`
      create table lead (tenant_id text not null, id text not null, company_id text, primary key (tenant_id, id),
        constraint lead_company_id_tfkey foreign key (tenant_id, company_id) references company (tenant_id, id) on delete set null (company_id));
      select create_distributed_table('lead', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: lead: foreign key lead_company_id_tfkey holds the distribution column tenant_id and is on delete set null: Citus refuses SET NULL and SET DEFAULT/);
    await refused(`
      create table lead (tenant_id text not null, id text not null, company_id text default 'none', primary key (tenant_id, id),
        constraint lead_company_id_tfkey foreign key (tenant_id, company_id) references company (tenant_id, id) on delete set default (company_id));
      select create_distributed_table('lead', 'tenant_id', colocate_with => 'company');`)
      .toThrow(/citus rule: lead: foreign key lead_company_id_tfkey holds the distribution column tenant_id and is on delete set default/);
    // Added later to a distributed table (the DDL trigger), as a layout-3 project's key would be.
    await refused(`
      create table lead (tenant_id text not null, id text not null, company_id text, primary key (tenant_id, id));
      select create_distributed_table('lead', 'tenant_id', colocate_with => 'company');
      alter table lead add constraint lead_company_id_tfkey foreign key (tenant_id, company_id) references company (tenant_id, id) on delete set null (company_id) not valid;`)
      .toThrow(/citus rule: lead: foreign key lead_company_id_tfkey holds the distribution column tenant_id and is on delete set null/);
    // A key to a reference table without tenant_id may set null (Citus allows it).
    await runSql(url, `
      create table lead (tenant_id text not null, id text not null, owner_id text references users (id) on delete set null, primary key (tenant_id, id));
      select create_distributed_table('lead', 'tenant_id', colocate_with => 'company');
      drop table lead;`);
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
    // Citus (and the stub's DDL trigger) would refuse that index on a distributed table; here it stands for
    // one made before, so the trigger is off while it is made (the batch is one transaction, rolled back).
    await refused(`
      alter event trigger citus_stub_after_ddl disable;
      create unique index company_id_alone on company (id);
      alter event trigger citus_stub_after_ddl enable;
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

  it('refuses a foreign key added later from a distributed table to a table not yet distributed, and accepts it once that table is', async () => {
    await runSql(url, `
      create table segment (tenant_id text not null, id text not null, primary key (tenant_id, id));
      alter table company add column segment_id text;`);
    const key = 'alter table company add constraint company_segment_tfkey foreign key (tenant_id, segment_id) references segment (tenant_id, id) not valid';
    await refused(key)
      .toThrow(/citus rule: company: foreign key company_segment_tfkey references segment, which is neither distributed nor a reference table yet: distribute segment first/);
    await runSql(url, `select create_distributed_table('segment', 'tenant_id', colocate_with => 'company'); ${key}; alter table company validate constraint company_segment_tfkey;`);
  });

  it('refuses a key added later between distributed tables without tenant_id, or to another co-location group', async () => {
    await runSql(url, `
      create table region (tenant_id text not null, id text not null, primary key (tenant_id, id));
      select create_distributed_table('region', 'tenant_id', colocate_with => 'none');
      create table branch (tenant_id text not null, id text not null, region_id text, company_id text, primary key (tenant_id, id));
      select create_distributed_table('branch', 'tenant_id', colocate_with => 'company');`);
    await refused('alter table branch add constraint branch_region_tfkey foreign key (tenant_id, region_id) references region (tenant_id, id)')
      .toThrow(/citus rule: branch: foreign key branch_region_tfkey references region, which is not co-located with it \(co-location group \d+\)/);
    await refused('alter table branch add constraint branch_company_fkey foreign key (company_id, tenant_id) references company (tenant_id, id)')
      .toThrow(/citus rule: branch: foreign key branch_company_fkey to company does not hold the distribution column on both sides at the same position/);
  });

  it('refuses a unique index created later on a distributed table without tenant_id as a plain column', async () => {
    await refused(`create unique index company_name_key on company (coalesce(tenant_id, ''), owner_id)`)
      .toThrow(/citus rule: company: unique index company_name_key does not hold the distribution column tenant_id/);
  });

  it('refuses a key added later from a reference table to a distributed one', async () => {
    await refused(`alter table users add column company_tenant text, add column company_id text,
        add constraint users_company_fkey foreign key (company_tenant, company_id) references company (tenant_id, id)`)
      .toThrow(/citus rule: users: foreign key users_company_fkey references company, which is not a reference table \(yet\)/);
  });

  it('accepts a key added from a plain table to a distributed one, as Citus does, and checks it when that table is distributed', async () => {
    await runSql(url, `
      create table visit_log (tenant_id text not null, id text not null, company_id text, primary key (tenant_id, id));
      alter table visit_log add constraint visit_log_company_fkey foreign key (company_id, tenant_id) references company (tenant_id, id);`);
    await refused(`select create_distributed_table('visit_log', 'tenant_id', colocate_with => 'company')`)
      .toThrow(/citus rule: visit_log: foreign key visit_log_company_fkey to company does not hold the distribution column/);
  });

  it('forgets a dropped table, as Citus drops its metadata', async () => {
    await runSql(url, `
      create table scratch (tenant_id text not null, id text not null, primary key (tenant_id, id));
      select create_distributed_table('scratch', 'tenant_id', colocate_with => 'company');`);
    expect((await placements(url)).map((p) => p.table)).toContain('scratch');
    await runSql(url, 'drop table scratch');
    expect((await placements(url)).map((p) => p.table)).not.toContain('scratch');
  });
});
