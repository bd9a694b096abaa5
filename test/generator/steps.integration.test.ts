/**
 * Generated safe-form migrations applied by the real runner to tables with
 * rows: make-required under concurrent writes, a unique's duplicate
 * preflight, expand/contract of a rename and of a rewriting type change with
 * old and new writers (the contract held back while an old instance is
 * registered), the conversion of existing projects (layouts 1 and 2) to
 * layout 3 (ADR 025: tenant not null, keys (tenant_id, id)), and a layout-3
 * project's set-null relation keys swapped for no action (layout 4).
 */
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatPlan, MigrationError, planMigrations, type MigrateSettings } from '../../runtime/db/migrate/index.ts';
import { REPO_ROOT } from '../helpers/fixtures.ts';
import { openDb } from '../migrate/helpers.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { deployment, type Deployment } from '../helpers/deploy.ts';
import { FIXTURES, buildOk, copySchema, tempDir } from './helpers.ts';

let database: TestDatabase;
let client: pg.Client;
let schemas = 0;
const deployments: Deployment[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});
afterAll(async () => {
  for (const d of deployments.splice(0)) await d.close();
  await client.end();
  await database.drop();
});

const exec = (text: string, values: unknown[] = []) => client.query(text, values);
const rows = async <T extends pg.QueryResultRow>(text: string, values: unknown[] = []) => (await client.query<T>(text, values)).rows;

function edit(path: string, from: string, to: string): void {
  const text = readFileSync(path, 'utf8');
  if (!text.includes(from)) throw new Error(`schema does not contain ${from}`);
  writeFileSync(path, text.replace(from, to));
}

const filesOf = (outDir: string) => readdirSync(join(outDir, 'migrations')).sort().map((f) => join(outDir, 'migrations', f));

/** A Postgres schema of its own, with every migration of `outDir` deployed by the runner. */
async function deployAll(outDir: string): Promise<{ schema: string; deployed: Deployment }> {
  const schema = `s${++schemas}`;
  await exec(`create schema ${schema}; set search_path to ${schema}`);
  const deployed = deployment(database.url, schema);
  deployments.push(deployed);
  await deployed.migrate(filesOf(outDir));
  return { schema, deployed };
}

async function historyProject() {
  const schemaPath = copySchema('history/v3');
  const outDir = tempDir('steps-sql');
  await buildOk({ schemaPath, outDir, name: 'history' });
  const { deployed, schema } = await deployAll(outDir);
  // Layout 3: the global scope is '' and a relation stays in its tenant, so company c1 exists in each tenant the tests write.
  await exec(`insert into "company" ("id", "name", "tenant_id") values ('c1', 'Acme', ''), ('c1', 'Acme', 't1'), ('c1', 'Acme', 't2')`);
  /** Builds after the edits and deploys the expand (or only) file; the contract, when there is one, on request. */
  const rebuild = async (edits: [string, string][], options: { allowDestructive?: boolean; settings?: Partial<MigrateSettings> } = {}) => {
    for (const [from, to] of edits) edit(schemaPath, from, to);
    const result = await buildOk({ schemaPath, outDir, name: 'history', allowDestructive: options.allowDestructive });
    const expand = await deployed.migrate([join(outDir, result.migration!.path)], options.settings);
    const contract = result.contract ? () => deployed.migrate([join(outDir, result.contract!.path)]) : null;
    return { expand, contract, result };
  };
  return { rebuild, schema };
}

async function seedDeals(count: number, title: string): Promise<void> {
  await exec(`insert into "deal" ("id", "title", "company_id", "amount", "tenant_id") select 'd' || lpad(i::text, 6, '0'), ${title}, 'c1', i * 1.5, '' from generate_series(1, ${count}) i`);
}

const columnsOf = async (table: string) =>
  (await rows<{ column_name: string }>(`select column_name from information_schema.columns where table_schema = current_schema() and table_name = $1 order by ordinal_position`, [table])).map((r) => r.column_name);

/** Application writes on a connection of their own until stopped: every failure is kept. */
function keepWriting(schema: string, write: (c: pg.Client, i: number) => Promise<unknown>) {
  const writer = new pg.Client({ connectionString: database.url, options: `-c search_path=${schema}` });
  const failures: string[] = [];
  let writes = 0;
  let running = true;
  const loop = (async () => {
    await writer.connect();
    while (running) {
      try {
        await write(writer, writes);
        writes++;
      } catch (error) {
        failures.push((error as Error).message);
      }
    }
    await writer.end();
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { writes, failures };
    },
  };
}

describe('online-safe steps on tables with rows, by the runner', { timeout: 90_000 }, () => {
  it('make required: default, batched backfill, check, validate, set not null, while the application keeps writing', async () => {
    const { rebuild, schema } = await historyProject();
    await exec(`insert into "contact" ("id", "name", "email", "vip", "tenant_id") select 'p' || lpad(i::text, 6, '0'), 'n', 'p' || i || '@x.io', null, '' from generate_series(1, 3000) i`);
    const writer = keepWriting(schema, async (c, i) => {
      // An update of any row, filled or not yet, and a new row that omits the field.
      await c.query(`update "contact" set "name" = $2 where "id" = 'p' || lpad($1::text, 6, '0')`, [(i * 7) % 3000 + 1, `w${i}`]);
      await c.query(`insert into "contact" ("id", "name", "email", "tenant_id") values ($1, 'new', $2, '')`, [`q${i}`, `q${i}@x.io`]);
    });
    const { expand } = await rebuild([['  /** @default false */\n  vip?: boolean;', '  /** @default false */\n  vip: boolean;']], {
      allowDestructive: true,
      settings: { batchRows: 500 },
    });
    const { writes, failures } = await writer.stop();
    expect(expand.applied).toHaveLength(1);
    expect(failures).toEqual([]);
    expect(writes).toBeGreaterThan(0);
    expect(await rows(`select count(*)::int as n from "contact" where "vip" is null`)).toEqual([{ n: 0 }]);
    expect(await rows(`select attnotnull from pg_attribute where attrelid = 'contact'::regclass and attname = 'vip'`)).toEqual([{ attnotnull: true }]);
    expect(await rows(`select conname from pg_constraint where conrelid = 'contact'::regclass and conname like '%notnull'`)).toEqual([]);
  });

  it('a backfill on a layout-3 table walks its primary key (tenant_id, id): every tenant\'s rows once, across tenant boundaries', async () => {
    const { rebuild } = await historyProject();
    // Interleaved tenants, most rows in the global scope (a tenant holding most rows is the planner's hard case).
    await exec(`insert into "deal" ("id", "title", "company_id", "tenant_id", "amount")
      select 'd' || lpad(i::text, 6, '0'), 't', 'c1', case when i % 5 = 0 then 't1' when i % 7 = 0 then 't2' else '' end, case when i % 3 = 0 then i end
        from generate_series(1, 3000) i`);
    const nulls = (await rows<{ n: number }>(`select count(*)::int as n from "deal" where "amount" is null`))[0].n;
    const { expand } = await rebuild([['  /** @index */\n  amount?: number;', '  /** @index @default 0 */\n  amount: number;']], { allowDestructive: true, settings: { batchRows: 250 } });
    expect(expand.applied).toHaveLength(1);
    expect(await rows(`select count(*)::int as n from "deal" where "amount" is null`)).toEqual([{ n: 0 }]);
    expect(await rows(`select count(*)::int as n from "deal" where "amount" = 0`)).toEqual([{ n: nulls }]);
    const [step] = await rows<{ cursor: string; rows_done: string }>(`select cursor, rows_done from svc_migration_steps where kind = 'backfill' and description like '%Deal.amount%'`);
    expect(Number(step.rows_done)).toBe(nulls);
    expect(JSON.parse(step.cursor)).toEqual([expect.stringMatching(/^(|t1|t2)$/), expect.stringMatching(/^d\d{6}$/)]);
  });

  it('a unique with duplicates stops at its preflight naming them, and creates no index', async () => {
    const { rebuild } = await historyProject();
    await exec(`insert into "deal" ("id", "title", "company_id", "tenant_id") values ('a', 'Big', 'c1', 't1'), ('b', 'Big', 'c1', 't1'), ('c', 'Big', 'c1', 't2'), ('d', 'G', 'c1', ''), ('e', 'G', 'c1', '')`);
    const failed = rebuild([['  title: string;', '  /** @unique */\n  title: string;']]);
    await expect(failed).rejects.toThrow(MigrationError);
    await expect(failed).rejects.toThrow(/"tenant_id":"t1","title":"Big"/);
    await expect(failed).rejects.toThrow(/"tenant_id":"","title":"G"/);
    expect(await rows(`select to_regclass('deal_title_tkey') as idx`)).toEqual([{ idx: null }]);
  });

  it('a unique keeps its meaning: per tenant, the global scope (\'\') is one tenant, deleted rows and empty values never collide', async () => {
    const { rebuild } = await historyProject();
    await rebuild([['  amount?: number;', '  /** @unique */\n  amount?: number;']]);
    await exec(`insert into "deal" ("id", "title", "company_id", "tenant_id", "amount") values ('a', 'x', 'c1', 't1', 1), ('b', 'x', 'c1', 't2', 1), ('c', 'x', 'c1', '', 1), ('d', 'x', 'c1', 't1', null), ('e', 'x', 'c1', 't1', null)`);
    await expect(exec(`insert into "deal" ("id", "title", "company_id", "tenant_id", "amount") values ('f', 'x', 'c1', '', 1)`)).rejects.toThrow(/deal_amount_tkey/);
    await expect(exec(`insert into "deal" ("id", "title", "company_id", "tenant_id", "amount") values ('g', 'x', 'c1', 't1', 1)`)).rejects.toThrow(/deal_amount_tkey/);
    await exec(`update "deal" set "deleted_at" = now() where "id" = 'a'; insert into "deal" ("id", "title", "company_id", "tenant_id", "amount") values ('h', 'x', 'c1', 't1', 1)`);
  });

  it('rename: the contract waits for the old instance; meanwhile old and new writers stay in step', async () => {
    const { rebuild } = await historyProject();
    await seedDeals(1500, `'T' || i`);
    // An instance of the build before the rename, alive and registered.
    await exec(`insert into "svc_realtime_instances" ("instance_id", "schema_migration", "ttl_ms") values ('old-1', '0001_initial.sql', 600000)`);
    const { expand, contract, result } = await rebuild([['  title: string;', '  /** @renamedFrom("title") */\n  name: string;']], { settings: { batchRows: 400 } });
    expect(result.contract).not.toBeNull();
    expect(expand.heldBack).toBeNull();
    const held = await contract!();
    expect(held.applied).toEqual([]);
    expect(held.heldBack?.message).toContain('old-1');
    expect(await rows(`select count(*)::int as n from "deal" where "name" is distinct from "title"`)).toEqual([{ n: 0 }]);
    // The old build writes "title", the new build writes "name".
    await exec(`insert into "deal" ("id", "title", "company_id", "tenant_id") values ('old', 'from old', 'c1', '')`);
    await exec(`insert into "deal" ("id", "name", "company_id", "tenant_id") values ('new', 'from new', 'c1', '')`);
    await exec(`update "deal" set "title" = 'old edit' where "id" = 'new'`);
    await exec(`update "deal" set "name" = 'new edit' where "id" = 'old'`);
    expect(await rows(`select "id", "title", "name" from "deal" where "id" in ('old', 'new') order by "id"`)).toEqual([
      { id: 'new', title: 'old edit', name: 'old edit' },
      { id: 'old', title: 'new edit', name: 'new edit' },
    ]);
    await expect(exec(`insert into "deal" ("id", "company_id", "tenant_id") values ('none', 'c1', '')`)).rejects.toThrow(/null value in column "name"|violates not-null/);
    // The old instance is gone: the contract applies.
    await exec(`delete from "svc_realtime_instances" where "instance_id" = 'old-1'`);
    expect((await contract!()).applied).toEqual([`schema/${result.contract!.path.slice('migrations/'.length)}`]);
    expect(await columnsOf('deal')).not.toContain('title');
    expect(await rows(`select "name" from "deal" where "id" = 'd000007'`)).toEqual([{ name: 'T7' }]);
    expect(await rows(`select count(*)::int as n from pg_proc where proname = 'deal_name_sync'`)).toEqual([{ n: 0 }]);
  });

  it('a type change that rewrites moves to a new column: converted, kept in step, then swapped', async () => {
    const { rebuild } = await historyProject();
    await seedDeals(1200, `'t'`);
    await exec(`update "deal" set "amount" = null where "id" = 'd000003'`);
    const { contract } = await rebuild([['  amount?: number;', '  amount?: string;']], { settings: { batchRows: 500 } });
    expect(await rows(`select "amount", "amount_v2" from "deal" where "id" in ('d000002', 'd000003') order by "id"`)).toEqual([
      { amount: 3, amount_v2: '3' },
      { amount: null, amount_v2: null },
    ]);
    await exec(`update "deal" set "amount" = 2.5 where "id" = 'd000001'`);
    await exec(`update "deal" set "amount_v2" = '42' where "id" = 'd000002'`);
    expect(await rows(`select "amount", "amount_v2" from "deal" where "id" in ('d000001', 'd000002') order by "id"`)).toEqual([
      { amount: 2.5, amount_v2: '2.5' },
      { amount: 42, amount_v2: '42' },
    ]);
    expect(await rows(`select i.indisvalid as valid from pg_index i where i.indexrelid = 'deal_amount_v2_tidx'::regclass`)).toEqual([{ valid: true }]);
    await contract!();
    expect(await columnsOf('deal')).not.toContain('amount');
    expect(await columnsOf('deal')).toContain('amount_v2');
  });
});

describe('tenant-leading indexes serve a tenant\'s ordered page', { timeout: 60_000 }, () => {
  it('a page ordered by an @index field is an index walk over that tenant\'s rows, with no sort', async () => {
    await historyProject();
    await exec(`insert into "company" ("id", "name", "tenant_id") select 'c1', 'Acme', 't' || i from generate_series(0, 199) i where i not in (1, 2)`);
    await exec(`insert into "deal" ("id", "tenant_id", "title", "company_id", "amount")
      select 'd' || lpad(i::text, 6, '0'), 't' || (i % 200), 'x', 'c1', (i * 7919) % 1000 from generate_series(1, 20000) i`);
    await exec('analyze "deal"');
    // The shape runtime/records/read.ts writes: tenant scope, live rows, order by the field then id, keyset limit.
    const [{ 'QUERY PLAN': plan }] = await rows<{ 'QUERY PLAN': unknown }>(`explain (format json)
      select * from "deal" t where t."deleted_at" is null and t."tenant_id" = 't7'
       order by t."amount" asc nulls last, t."id" asc nulls last limit 21`);
    const text = JSON.stringify(plan);
    expect(text).toContain('"Index Name":"deal_amount_tidx"');
    expect(text).not.toContain('"Node Type":"Sort"');
  });
});

/** Index definitions of the current schema's model tables, without the schema name. */
async function indexDefinitions(): Promise<string[]> {
  const found = await rows<{ def: string; valid: boolean }>(`
    select replace(pg_get_indexdef(i.indexrelid), current_schema() || '.', '') as def, i.indisvalid as valid
      from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema() and c.relname not like 'svc\\_%' order by 1`);
  expect(found.filter((r) => !r.valid)).toEqual([]);
  return found.map((r) => r.def);
}

describe('an existing project built in index layout 1 converts to layout 3', { timeout: 60_000 }, () => {
  /** DIR as a layout-1 build left it, deployed; then `build` with today's generator. */
  async function upgrade(fixture: 'history' | 'crm', schema: string, damage = '') {
    const outDir = tempDir(`layout-${fixture}`);
    cpSync(join(FIXTURES, 'layout-1', fixture), outDir, { recursive: true });
    const { deployed } = await deployAll(outDir);
    if (damage) await exec(damage);
    const result = await buildOk({ schemaPath: join(FIXTURES, schema, 'schema.ts'), outDir, name: fixture });
    const path = join(outDir, result.migration!.path);
    return { text: readFileSync(path, 'utf8'), apply: () => deployed.migrate([path]) };
  }

  async function freshIndexes(schema: string): Promise<string[]> {
    const outDir = tempDir('layout-fresh');
    await buildOk({ schemaPath: join(FIXTURES, schema, 'schema.ts'), outDir });
    await deployAll(outDir);
    return indexDefinitions();
  }

  it('history: new indexes concurrently, then the old ones dropped; the result equals a fresh build', async () => {
    const { text, apply } = await upgrade('history', 'history/v3');
    await exec(`insert into "company" ("id", "name", "tenant_id") values ('c1', 'Acme', 't1'); insert into "contact" ("id", "name", "email", "tenant_id") values ('p1', 'Ann', 'a@x.io', 't1')`);
    expect(text).not.toMatch(/^create (unique )?index (?!concurrently)/m);
    expect(text).toMatch(/drop index concurrently if exists "contact_email_key";/);
    await apply();
    const upgraded = await indexDefinitions();
    expect(upgraded).toEqual(await freshIndexes('history/v3'));
    expect(upgraded).toContain('CREATE INDEX deal_amount_tidx ON deal USING btree (tenant_id, amount, id)');
  });

  it('crm: a Media column without its index (projects built before it) gets it', async () => {
    const { text, apply } = await upgrade('crm', 'crm', 'drop index "company_logo_idx"');
    expect(text).toContain('create index concurrently if not exists "company_logo_idx" on "company" ("logo");');
    await apply();
    expect(await indexDefinitions()).toEqual(await freshIndexes('crm'));
  });
});

/** Check, foreign-key and primary-key definitions of a table (no transient not-null check may be left), with whether each is validated. */
async function keysOf(table: string): Promise<string[]> {
  const found = await rows<{ def: string; valid: boolean }>(`
    select conname || ' ' || pg_get_constraintdef(oid) as def, convalidated as valid from pg_constraint
     where conrelid = $1::regclass and contype in ('p', 'f', 'c') order by contype, conname`, [table]);
  return found.map((r) => `${r.def}${r.valid ? '' : ' NOT VALID'}`);
}

describe('a layout-2 project converts to layout 3 with the runner, online', { timeout: 120_000 }, () => {
  /** fixtures/layout-2/history (v1..v4 built by the layout-2 generator), deployed, with rows; then built by today's generator. */
  async function layoutTwo() {
    const outDir = tempDir('layout-2-history');
    cpSync(join(FIXTURES, 'layout-2', 'history'), outDir, { recursive: true });
    const { deployed, schema } = await deployAll(outDir);
    // Layout 2 stores the global scope as null; relations point inside a tenant (the runtime's scoped lookups).
    await exec(`insert into "company" ("id", "name", "tenant_id") values ('g1', 'Global', null), ('g2', 'Global 2', null), ('a1', 'Acme', 't1')`);
    await exec(`insert into "contact" ("id", "email", "company_id", "tenant_id")
      select 'p' || lpad(i::text, 6, '0'), 'p' || i || '@x.io', case when i % 3 = 0 then null when i % 2 = 0 then 'a1' else 'g1' end, case when i % 2 = 0 and i % 3 <> 0 then 't1' else null end
        from generate_series(1, 2500) i`);
    await exec(`insert into "deal" ("id", "name", "company_id", "tenant_id", "amount_v2")
      select 'd' || lpad(i::text, 6, '0'), 'D' || i, case when i % 4 = 0 then 'a1' else 'g2' end, case when i % 4 = 0 then 't1' else null end, (i * 1.5)::text
        from generate_series(1, 3000) i`);
    await exec('analyze "company"; analyze "contact"; analyze "deal"');
    const result = await buildOk({ schemaPath: join(FIXTURES, 'history', 'v4', 'schema.ts'), outDir, name: 'history' });
    const file = (m: { path: string } | null) => join(outDir, m!.path);
    return {
      schema,
      outDir,
      result,
      expand: (settings?: Partial<MigrateSettings>) => deployed.migrate([file(result.migration)], settings),
      contract: () => deployed.migrate([file(result.contract)]),
    };
  }

  const counts = async () => rows<{ table: string; n: number; global: number; t1: number }>(`
    select 'company' as table, count(*)::int as n, count(*) filter (where coalesce(tenant_id, '') = '')::int as global, count(*) filter (where tenant_id = 't1')::int as t1 from "company"
    union all select 'contact', count(*)::int, count(*) filter (where coalesce(tenant_id, '') = '')::int, count(*) filter (where tenant_id = 't1')::int from "contact"
    union all select 'deal', count(*)::int, count(*) filter (where coalesce(tenant_id, '') = '')::int, count(*) filter (where tenant_id = 't1')::int from "deal" order by 1`);

  it('converts rows with null tenants and relations while an old instance keeps writing null; no row is lost, the keys are composite and valid', async () => {
    const { expand, contract, schema, result } = await layoutTwo();
    // An instance of the layout-2 build, alive and registered: it writes null for the global scope.
    await exec(`insert into "svc_realtime_instances" ("instance_id", "schema_migration", "ttl_ms") values ('old-1', '0005_contract_drop_the_old_column_of_deal_name_and_more.sql', 600000)`);
    const before = await counts();
    const writer = keepWriting(schema, async (c, i) => {
      await c.query(`insert into "deal" ("id", "name", "company_id", "tenant_id") values ($1, 'old', 'g2', null)`, [`w${i}`]);
      await c.query(`update "contact" set "name" = $2 where "id" = 'p' || lpad($1::text, 6, '0') and "tenant_id" is null`, [(i * 7) % 2500 + 1, `w${i}`]);
    });
    const applied = await expand({ batchRows: 400 });
    const { writes, failures } = await writer.stop();
    expect(applied.applied).toEqual([`schema/${result.migration!.path.slice('migrations/'.length)}`]);
    expect(failures).toEqual([]);
    expect(writes).toBeGreaterThan(0);

    // No row lost: every table holds what it held plus what the old instance wrote, the global scope now ''.
    const after = await counts();
    expect(after).toEqual(before.map((b) => (b.table === 'deal' ? { ...b, n: b.n + writes, global: b.global + writes } : b)));
    expect(await rows(`select count(*)::int as n from "deal" where "tenant_id" is null union all select count(*)::int from "contact" where "tenant_id" is null`)).toEqual([{ n: 0 }, { n: 0 }]);
    expect(await rows(`select "tenant_id", "company_id" from "contact" where "id" in ('p000001', 'p000002', 'p000003') order by "id"`)).toEqual([
      { tenant_id: '', company_id: 'g1' }, { tenant_id: 't1', company_id: 'a1' }, { tenant_id: '', company_id: null },
    ]);

    expect(await keysOf('contact')).toEqual([
      "contact_stage_check CHECK ((stage = ANY (ARRAY['lead'::text, 'qualified'::text, 'won'::text])))",
      'contact_company_id_tfkey FOREIGN KEY (tenant_id, company_id) REFERENCES company(tenant_id, id)',
      'contact_pkey PRIMARY KEY (tenant_id, id)',
    ]);
    expect(await keysOf('deal')).toEqual([
      'deal_company_id_tfkey FOREIGN KEY (tenant_id, company_id) REFERENCES company(tenant_id, id) ON DELETE RESTRICT',
      'deal_pkey PRIMARY KEY (tenant_id, id)',
    ]);
    expect(await rows(`select attname, attnotnull from pg_attribute where attrelid = 'deal'::regclass and attname = 'tenant_id'`)).toEqual([{ attname: 'tenant_id', attnotnull: true }]);

    // A relation to another tenant's row is refused by the key.
    await expect(exec(`insert into "contact" ("id", "email", "company_id", "tenant_id") values ('x1', 'x@x.io', 'g1', 't1')`)).rejects.toThrow(/contact_company_id_tfkey/);
    await expect(exec(`update "deal" set "company_id" = 'a1' where "id" = 'd000001'`)).rejects.toThrow(/deal_company_id_tfkey/);
    // The old instance still writes null: the trigger stores the global scope.
    await exec(`insert into "contact" ("id", "email", "company_id") values ('old-write', 'o@x.io', 'g1')`);
    expect(await rows(`select "tenant_id" from "contact" where "id" = 'old-write'`)).toEqual([{ tenant_id: '' }]);

    // The contract (dropping the trigger) waits for the old instance.
    const held = await contract();
    expect(held.applied).toEqual([]);
    expect(held.heldBack?.message).toContain('old-1');
    await exec(`delete from "svc_realtime_instances" where "instance_id" = 'old-1'`);
    expect((await contract()).applied).toEqual([`schema/${result.contract!.path.slice('migrations/'.length)}`]);
    expect(await rows(`select count(*)::int as n from pg_trigger t join pg_class c on c.oid = t.tgrelid where c.relnamespace = current_schema()::regnamespace and t.tgname like '%tenant_id_sync'`)).toEqual([{ n: 0 }]);
    expect(await rows(`select count(*)::int as n from pg_proc where pronamespace = current_schema()::regnamespace and proname like '%tenant_id_sync'`)).toEqual([{ n: 0 }]);
    await expect(exec(`insert into "contact" ("id", "email") values ('late', 'l@x.io')`)).rejects.toThrow(/null value in column "tenant_id"/);

    // The converted tables carry exactly the indexes and keys of a fresh layout-3 build.
    const converted = { indexes: await indexDefinitions(), keys: [...await keysOf('company'), ...await keysOf('contact'), ...await keysOf('deal')] };
    // The same history (v1..v4, so Deal.amount lives in amount_v2) built by today's generator from the start.
    const outDir = tempDir('layout-3-fresh');
    const schemaPath = copySchema('history/v1');
    for (const v of ['v1', 'v2', 'v3', 'v4']) {
      writeFileSync(schemaPath, readFileSync(join(FIXTURES, 'history', v, 'schema.ts'), 'utf8'));
      await buildOk({ schemaPath, outDir, name: 'history' });
    }
    await deployAll(outDir);
    expect(converted).toEqual({ indexes: await indexDefinitions(), keys: [...await keysOf('company'), ...await keysOf('contact'), ...await keysOf('deal')] });
  });

  it('the lock report (migrate --plan) says what each conversion step locks, on the tables with their rows', async () => {
    const { schema, outDir, result } = await layoutTwo();
    const url = new URL(database.url);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const db = openDb(url.toString());
    try {
      const plan = await planMigrations(db, [{ scope: 'runtime:realtime', dir: join(REPO_ROOT, 'runtime', 'realtime', 'migrations') }, { scope: 'schema', dir: join(outDir, 'migrations') }]);
      const deal = plan.filter((p) => p.lock.table === 'deal' && p.file.endsWith(result.migration!.path.slice('migrations/'.length)));
      expect(deal.map((p) => [p.kind, p.lock.lock, p.lock.brief, p.lock.scans, p.lock.rewrites, p.online, p.rows])).toEqual([
        ['transactional', 'SHARE ROW EXCLUSIVE', true, false, false, false, 3000], // the trigger
        ['backfill', 'ROW EXCLUSIVE', false, false, false, true, 3000],
        ['transactional', 'ACCESS EXCLUSIVE', true, false, false, false, 3000], // check not valid
        ['online', 'SHARE UPDATE EXCLUSIVE', false, true, false, true, 3000], // validate
        ['transactional', 'ACCESS EXCLUSIVE', true, false, false, false, 3000], // set not null: the validated check spares the scan
        ['online', 'SHARE UPDATE EXCLUSIVE', false, true, false, true, 3000], // (tenant_id, company_id) concurrently
        ['online', 'SHARE UPDATE EXCLUSIVE', false, true, false, true, 3000], // unique (tenant_id, id) concurrently
        ['preflight', 'ACCESS SHARE', false, true, false, true, 3000],
        ['transactional', 'SHARE ROW EXCLUSIVE', true, false, false, false, 3000], // composite key not valid
        ['online', 'SHARE UPDATE EXCLUSIVE', false, true, false, true, 3000], // validate it
        ['transactional', 'ACCESS EXCLUSIVE', true, false, false, false, 3000], // drop the old key
        ['transactional', 'ACCESS EXCLUSIVE', true, false, false, false, 3000], // the primary key swap
        ['online', 'SHARE UPDATE EXCLUSIVE', true, false, false, true, 3000], // old indexes dropped concurrently
        ['online', 'SHARE UPDATE EXCLUSIVE', true, false, false, true, 3000],
      ]);
      const text = formatPlan(plan);
      expect(text).toMatch(/step 31 transactional: key Deal by \(tenant_id, id\): the validated unique index becomes the primary key \(catalog only\)\n {2}lock: ACCESS EXCLUSIVE on deal \(brief, catalog only; blocks reads and writes for milliseconds\)\n {2}rewrites table: no; scans table: no; online: no; rows: 0 of ~3,000 \(catalog only\)/);
      expect(text).toMatch(/step 12 backfill: set Deal.tenant_id to '' \(the global scope\) where it is null\n {2}lock: ROW EXCLUSIVE on deal \(row locks per batch; blocks no reads or writes\)\n {2}rewrites table: no; scans table: no; online: yes; rows: ~3,000/);
    } finally {
      await db.$pool.end();
    }
  });

  it('a relation to a row of another tenant (which layout 2 did not refuse) stops the conversion at its preflight, naming the row', async () => {
    const { expand } = await layoutTwo();
    await exec(`update "contact" set "company_id" = 'a1' where "id" = 'p000001'`);
    const failed = expand();
    await expect(failed).rejects.toThrow(MigrationError);
    await expect(failed).rejects.toThrow(/"id":"p000001"/);
    expect(await keysOf('contact')).toContain('contact_pkey PRIMARY KEY (id)');
  });
});

describe('a layout-3 project swaps its set-null relation keys for no action with the runner, online', { timeout: 120_000 }, () => {
  it('adds each key beside the old one while an old instance keeps deleting parents; the contract, once no old instance runs, leaves only the new keys, as a fresh build has them', async () => {
    // fixtures/layout-3/crm: the CRM as the layout-3 generator built it, deployed, with rows in two tenants (the same company id in each).
    const outDir = tempDir('layout-3-crm');
    cpSync(join(FIXTURES, 'layout-3', 'crm'), outDir, { recursive: true });
    const { deployed, schema } = await deployAll(outDir);
    await exec(`insert into "company" ("id", "name", "tenant_id") values ('c1', 'Acme', 't1'), ('c1', 'Acme', 't2'), ('c2', 'Beta', 't1')`);
    await exec(`insert into "contact" ("id", "first_name", "email", "company_id", "tenant_id")
      select 'p' || i, 'P' || i, 'p' || i || '@x.io', case when i % 2 = 0 then 'c1' else 'c2' end, case when i % 3 = 0 then 't2' else 't1' end
        from generate_series(1, 600) i where not (i % 3 = 0 and i % 2 = 1)`);
    await exec(`insert into "deal" ("id", "title", "amount", "company_id", "contact_id", "tenant_id") values ('d1', 'Deal', 10, 'c1', 'p2', 't1')`);
    expect(await keysOf('contact')).toContain('contact_company_id_tfkey FOREIGN KEY (tenant_id, company_id) REFERENCES company(tenant_id, id) ON DELETE SET NULL (company_id)');

    // An instance of the layout-3 build, alive and registered: it deletes parents and relies on set null.
    await exec(`insert into "svc_realtime_instances" ("instance_id", "schema_migration", "ttl_ms") values ('old-3', '0001_initial.sql', 600000)`);
    const result = await buildOk({ schemaPath: join(FIXTURES, 'crm', 'schema.ts'), outDir });
    expect(result.migration!.path).toBe('migrations/0002_key_activity_contact_on_delete_no_action_and_more.sql');
    const writer = keepWriting(schema, async (c, i) => {
      await c.query(`insert into "company" ("id", "name", "tenant_id") values ($1, 'W', 't1')`, [`w${i}`]);
      await c.query(`insert into "contact" ("id", "first_name", "email", "company_id", "tenant_id") values ($1, 'W', $1 || '@x.io', $2, 't1')`, [`pw${i}`, `w${i}`]);
      await c.query(`delete from "company" where "tenant_id" = 't1' and "id" = $1`, [`w${i}`]);
    });
    const applied = await deployed.migrate([join(outDir, result.migration!.path)]);
    const { writes, failures } = await writer.stop();
    expect(applied.applied).toEqual([`schema/${result.migration!.path.slice('migrations/'.length)}`]);
    expect(failures).toEqual([]);
    expect(writes).toBeGreaterThan(0);
    // Both keys stand, both validated; the old one still empties the column of the old instance's deletes.
    expect(await keysOf('contact')).toEqual([
      'contact_company_id_nfkey FOREIGN KEY (tenant_id, company_id) REFERENCES company(tenant_id, id)',
      'contact_company_id_tfkey FOREIGN KEY (tenant_id, company_id) REFERENCES company(tenant_id, id) ON DELETE SET NULL (company_id)',
      'contact_pkey PRIMARY KEY (tenant_id, id)',
    ]);
    expect(await rows(`select count(*)::int as n from "contact" where "id" like 'pw%' and "company_id" is null`)).toEqual([{ n: writes }]);
    await exec(`delete from "company" where "tenant_id" = 't2' and "id" = 'c1'`);
    expect(await rows(`select "tenant_id", count(*)::int as n from "contact" where "company_id" = 'c1' group by 1 order by 1`)).toEqual([{ tenant_id: 't1', n: 200 }]);

    // The contract waits for the old instance, then drops the set-null keys and names the new ones as a fresh build does.
    const held = await deployed.migrate([join(outDir, result.contract!.path)]);
    expect(held.applied).toEqual([]);
    expect(held.heldBack?.message).toContain('old-3');
    await exec(`delete from "svc_realtime_instances" where "instance_id" = 'old-3'`);
    expect((await deployed.migrate([join(outDir, result.contract!.path)])).applied).toEqual([`schema/${result.contract!.path.slice('migrations/'.length)}`]);
    expect(await keysOf('deal')).toEqual([
      "deal_stage_check CHECK ((stage = ANY (ARRAY['lead'::text, 'qualified'::text, 'proposal'::text, 'won'::text, 'lost'::text])))",
      'deal_company_id_tfkey FOREIGN KEY (tenant_id, company_id) REFERENCES company(tenant_id, id) ON DELETE RESTRICT',
      'deal_contact_id_tfkey FOREIGN KEY (tenant_id, contact_id) REFERENCES contact(tenant_id, id)',
      'deal_pkey PRIMARY KEY (tenant_id, id)',
    ]);
    // The database refuses a delete that leaves a reference: the service clears the references first.
    await expect(exec(`delete from "contact" where "tenant_id" = 't1' and "id" = 'p2'`)).rejects.toThrow(/deal_contact_id_tfkey/);
    await exec(`begin; update "deal" set "contact_id" = null where "tenant_id" = 't1' and "contact_id" = any(array['p2']); delete from "contact" where "tenant_id" = 't1' and "id" = 'p2'; commit`);
    expect(await rows(`select "contact_id" from "deal" where "tenant_id" = 't1' and "id" = 'd1'`)).toEqual([{ contact_id: null }]);

    const tables = ['activity', 'company', 'contact', 'deal', 'line_item', 'note', 'product', 'ticket'];
    const keysOfAll = async () => {
      const all: string[] = [];
      for (const table of tables) all.push(...await keysOf(table));
      return all;
    };
    const converted = await keysOfAll();
    expect(converted.filter((k) => /SET NULL|NOT VALID|nfkey/.test(k))).toEqual([]);
    const fresh = tempDir('layout-4-crm-fresh');
    await buildOk({ schemaPath: join(FIXTURES, 'crm', 'schema.ts'), outDir: fresh });
    await deployAll(fresh);
    expect(converted).toEqual(await keysOfAll());
  });
});
