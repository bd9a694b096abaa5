/**
 * Generated safe-form migrations applied to a real Postgres with rows in the
 * tables, step by step in the mode each step names (test/helpers/steps.ts):
 * make-required with writes between its steps, a unique's duplicate
 * preflight, expand/contract of a rename and of a rewriting type change with
 * old and new writers, and the switch of an existing project to index layout 2.
 */
import { cpSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { applyMigration, PreflightError, type ApplyOptions } from '../helpers/steps.ts';
import { FIXTURES, buildOk, copySchema, tempDir } from './helpers.ts';

let database: TestDatabase;
let client: pg.Client;
let schemas = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});
afterAll(async () => {
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

/** A Postgres schema of its own, migrated to what `outDir` holds. */
async function migrateAll(outDir: string): Promise<string> {
  const schema = `s${++schemas}`;
  await exec(`create schema ${schema}; set search_path to ${schema}`);
  for (const file of readdirSync(join(outDir, 'migrations')).sort()) await applyMigration(client, readFileSync(join(outDir, 'migrations', file), 'utf8'));
  return schema;
}

async function historyProject() {
  const schemaPath = copySchema('history/v3');
  const outDir = tempDir('steps-sql');
  await buildOk({ schemaPath, outDir, name: 'history' });
  await migrateAll(outDir);
  await exec(`insert into "company" ("id", "name") values ('c1', 'Acme')`);
  /** Builds after the edits and applies the new files: the expand, then (unless held back) the contract. */
  const rebuild = async (edits: [string, string][], options: ApplyOptions & { allowDestructive?: boolean } = {}) => {
    for (const [from, to] of edits) edit(schemaPath, from, to);
    const result = await buildOk({ schemaPath, outDir, name: 'history', allowDestructive: options.allowDestructive });
    const read = (path: string) => readFileSync(join(outDir, path), 'utf8');
    await applyMigration(client, read(result.migration!.path), options);
    return { contract: result.contract ? () => applyMigration(client, read(result.contract!.path)) : null };
  };
  return { rebuild };
}

async function seedDeals(count: number, fill: (i: number) => string): Promise<void> {
  await exec(`insert into "deal" ("id", "title", "company_id", "amount") select 'd' || lpad(i::text, 6, '0'), ${fill(0)}, 'c1', i * 1.5 from generate_series(1, ${count}) i`);
}

const columnsOf = async (table: string) =>
  (await rows<{ column_name: string }>(`select column_name from information_schema.columns where table_schema = current_schema() and table_name = $1 order by ordinal_position`, [table])).map((r) => r.column_name);

describe('online-safe steps on tables with rows', { timeout: 60_000 }, () => {
  it('make required: default, batched backfill, check, validate, set not null; writes between steps keep working', async () => {
    const { rebuild } = await historyProject();
    await exec(`insert into "contact" ("id", "name", "email", "vip") select 'p' || lpad(i::text, 6, '0'), 'n', 'p' || i || '@x.io', null from generate_series(1, 2500) i`);
    const seen: string[] = [];
    await rebuild([['  /** @default false */\n  vip?: boolean;', '  /** @default false */\n  vip: boolean;']], {
      allowDestructive: true,
      batchRows: 1000,
      before: async (step) => {
        seen.push(step.kind);
        // An application update of a row the backfill has not reached yet, and a new row that omits the field.
        await exec(`update "contact" set "name" = 'touched' where "id" = 'p002500'`);
        await exec(`insert into "contact" ("id", "name", "email") values ($1, 'new', $2)`, [`q${seen.length}`, `q${seen.length}@x.io`]);
      },
    });
    expect(seen).toEqual(['backfill', 'transactional', 'online', 'transactional']);
    expect(await rows(`select count(*)::int as n from "contact" where "vip" is null`)).toEqual([{ n: 0 }]);
    expect(await rows(`select attnotnull from pg_attribute where attrelid = 'contact'::regclass and attname = 'vip'`)).toEqual([{ attnotnull: true }]);
    expect(await rows(`select conname from pg_constraint where conrelid = 'contact'::regclass and conname like '%notnull'`)).toEqual([]);
  });

  it('a unique with duplicates stops at its preflight naming them, and creates no index', async () => {
    const { rebuild } = await historyProject();
    await exec(`insert into "deal" ("id", "title", "company_id", "tenant_id") values ('a', 'Big', 'c1', 't1'), ('b', 'Big', 'c1', 't1'), ('c', 'Big', 'c1', 't2'), ('d', 'G', 'c1', null), ('e', 'G', 'c1', null)`);
    const change: [string, string][] = [['  title: string;', '  /** @unique */\n  title: string;']];
    const failed = rebuild(change);
    await expect(failed).rejects.toThrow(PreflightError);
    await expect(failed).rejects.toThrow(/"tenant_id":"t1","title":"Big"/);
    await expect(failed).rejects.toThrow(/"tenant_id":null,"title":"G"/);
    expect(await rows(`select to_regclass('deal_title_tkey') as idx`)).toEqual([{ idx: null }]);
  });

  it('a unique keeps its meaning: per tenant, a null tenant is one tenant, deleted rows and empty values never collide', async () => {
    const { rebuild } = await historyProject();
    await rebuild([['  amount?: number;', '  /** @unique */\n  amount?: number;']]);
    await exec(`insert into "deal" ("id", "title", "company_id", "tenant_id", "amount") values ('a', 'x', 'c1', 't1', 1), ('b', 'x', 'c1', 't2', 1), ('c', 'x', 'c1', null, 1), ('d', 'x', 'c1', 't1', null), ('e', 'x', 'c1', 't1', null)`);
    await expect(exec(`insert into "deal" ("id", "title", "company_id", "tenant_id", "amount") values ('f', 'x', 'c1', null, 1)`)).rejects.toThrow(/deal_amount_tkey/);
    await expect(exec(`insert into "deal" ("id", "title", "company_id", "tenant_id", "amount") values ('g', 'x', 'c1', 't1', 1)`)).rejects.toThrow(/deal_amount_tkey/);
    await exec(`update "deal" set "deleted_at" = now() where "id" = 'a'; insert into "deal" ("id", "title", "company_id", "tenant_id", "amount") values ('h', 'x', 'c1', 't1', 1)`);
  });

  it('rename: the expand keeps old and new writers in step, the contract drops the old column', async () => {
    const { rebuild } = await historyProject();
    await seedDeals(1500, () => `'T' || i`);
    const { contract } = await rebuild([['  title: string;', '  /** @renamedFrom("title") */\n  name: string;']], { batchRows: 400 });
    expect(await rows(`select count(*)::int as n from "deal" where "name" is distinct from "title"`)).toEqual([{ n: 0 }]);
    // An instance of the old build writes "title", one of the new build writes "name".
    await exec(`insert into "deal" ("id", "title", "company_id") values ('old', 'from old', 'c1')`);
    await exec(`insert into "deal" ("id", "name", "company_id") values ('new', 'from new', 'c1')`);
    await exec(`update "deal" set "title" = 'old edit' where "id" = 'new'`);
    await exec(`update "deal" set "name" = 'new edit' where "id" = 'old'`);
    expect(await rows(`select "id", "title", "name" from "deal" where "id" in ('old', 'new') order by "id"`)).toEqual([
      { id: 'new', title: 'old edit', name: 'old edit' },
      { id: 'old', title: 'new edit', name: 'new edit' },
    ]);
    await expect(exec(`insert into "deal" ("id", "company_id") values ('none', 'c1')`)).rejects.toThrow(/null value in column "name"|violates not-null/);
    await contract!();
    expect(await columnsOf('deal')).not.toContain('title');
    expect(await rows(`select "name" from "deal" where "id" = 'd000007'`)).toEqual([{ name: 'T7' }]);
    expect(await rows(`select count(*)::int as n from pg_proc where proname = 'deal_name_sync'`)).toEqual([{ n: 0 }]);
  });

  it('a type change that rewrites moves to a new column: converted, kept in step, then swapped', async () => {
    const { rebuild } = await historyProject();
    await seedDeals(1200, () => `'t'`);
    await exec(`update "deal" set "amount" = null where "id" = 'd000003'`);
    const { contract } = await rebuild([['  amount?: number;', '  amount?: string;']], { batchRows: 500 });
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

/** Index definitions of the current schema, without the schema name, by table. */
async function indexDefinitions(): Promise<string[]> {
  const found = await rows<{ def: string; valid: boolean }>(`
    select replace(pg_get_indexdef(i.indexrelid), current_schema() || '.', '') as def, i.indisvalid as valid
      from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema() order by 1`);
  expect(found.filter((r) => !r.valid)).toEqual([]);
  return found.map((r) => r.def);
}

describe('an existing project switches to index layout 2', { timeout: 60_000 }, () => {
  /** DIR as a layout-1 build left it, with its migrations applied; then `build` with today's generator. */
  async function upgrade(fixture: 'history' | 'crm', schema: string, damage = '') {
    const outDir = tempDir(`layout-${fixture}`);
    cpSync(join(FIXTURES, 'layout-1', fixture), outDir, { recursive: true });
    await migrateAll(outDir);
    if (damage) await exec(damage);
    const result = await buildOk({ schemaPath: join(FIXTURES, schema, 'schema.ts'), outDir, name: fixture });
    const text = readFileSync(join(outDir, result.migration!.path), 'utf8');
    return { text, apply: () => applyMigration(client, text) };
  }

  async function freshIndexes(schema: string): Promise<string[]> {
    const outDir = tempDir('layout-fresh');
    await buildOk({ schemaPath: join(FIXTURES, schema, 'schema.ts'), outDir });
    await migrateAll(outDir);
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
