import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { TestService } from '../helpers/service.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { adminFetch, startCatalog, testDatabase, until, writer } from './helpers.ts';

async function projectionRow(svc: TestService, id: string) {
  return svc.ctx.db.oneOrNone('select * from product_projection where id = $1', [id]);
}

describe('built-in projections', () => {
  let svc: TestService;
  let w: ReturnType<typeof writer>;

  beforeAll(async () => {
    svc = await startCatalog();
    w = writer(svc.ctx);
  });
  afterAll(async () => svc?.close());

  it('GET /projections lists one projection per entity model, not enums or embedded blocks', async () => {
    const res = await adminFetch(svc, '/projections');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      projections: [
        { name: 'product_projection', source_model: 'Product', status: 'ready' },
        { name: 'secret_projection', source_model: 'Secret', status: 'ready' },
        { name: 'vendor_projection', source_model: 'Vendor', status: 'ready' },
      ],
    });
  });

  it('GET /projections: 401 without or with an invalid token, 403 for a non-admin', async () => {
    expect((await fetch(`${svc.url}/projections`)).status).toBe(401);
    const bad = await fetch(`${svc.url}/projections`, { headers: { authorization: 'Bearer not-a-jwt' } });
    expect(bad.status).toBe(401);
    const manager = await svc.token({ role: 'Manager' });
    expect((await fetch(`${svc.url}/projections`, { headers: { authorization: `Bearer ${manager}` } })).status).toBe(403);
  });

  it('every projection column is text', async () => {
    const types = await svc.ctx.db.map(
      `select data_type from information_schema.columns where table_name = 'product_projection'`, [], (r) => r.data_type);
    expect(types.length).toBe(14);
    expect(new Set(types)).toEqual(new Set(['text']));
  });

  it('a change refreshes the row: NULL becomes empty text, numbers, booleans, dates and json become text', async () => {
    const vendor = await w.create('Vendor', { name: 'Acme' });
    const id = await w.create('Product', {
      name: 'Widget', status: 'published', price: 12.5, inStock: true, releasedAt: '2024-03-01T10:20:30.456Z',
      dimensions: { width: 2, height: 3 }, tags: ['a', 'b'], order: 3, vendorId: vendor,
    });
    const row = await until(() => projectionRow(svc, id), (r) => r !== null);
    expect(row).toMatchObject({
      id, tenant_id: '', name: 'Widget', status: 'published', price: '12.5', in_stock: 'true',
      released_at: '2024-03-01T10:20:30.456Z', dimensions: '{"width": 2, "height": 3}', tags: '["a", "b"]',
      order: '3', secret_note: '', vendor_id: vendor,
    });
    expect(row.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    await w.update('Product', id, { price: null, inStock: false });
    const updated = await until(() => projectionRow(svc, id), (r) => r?.in_stock === 'false');
    expect(updated).toMatchObject({ price: '', in_stock: 'false', name: 'Widget' });
  });

  it('soft delete removes the row, restore brings it back, hard delete removes it', async () => {
    const id = await w.create('Product', { name: 'Lifecycle' });
    await until(() => projectionRow(svc, id), (r) => r !== null);
    await w.lifecycle('Product', id, 'Deleted');
    expect(await until(() => projectionRow(svc, id), (r) => r === null)).toBeNull();
    await w.lifecycle('Product', id, 'Restored');
    expect(await until(() => projectionRow(svc, id), (r) => r !== null)).toMatchObject({ name: 'Lifecycle' });
    await w.lifecycle('Product', id, 'HardDeleted');
    expect(await until(() => projectionRow(svc, id), (r) => r === null)).toBeNull();
  });
});

describe('startup synchronisation and projection schema', () => {
  let database: TestDatabase;
  let svc: TestService | null = null;

  beforeAll(async () => {
    database = await testDatabase();
  });
  afterAll(async () => {
    await svc?.close();
    await database.drop();
  });

  async function sql(text: string, params: unknown[] = []) {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(text, params)).rows;
    } finally {
      await client.end();
    }
  }

  const compare = `select (select count(*) from (select id, name from product where deleted_at is null
                             except select id, name from product_projection) a)::int as missing,
                          (select count(*) from (select id, name from product_projection
                             except select id, name from product where deleted_at is null) b)::int as extra`;

  it('with SVC_PROJECTION_SYNC=always, changes made behind the service\'s back are reconciled at the next start, without the event log', async () => {
    svc = await startCatalog({ database, env: { SVC_HISTORY_POLICY: 'off' } });
    const w = writer(svc.ctx);
    const kept = await w.create('Product', { name: 'Kept' });
    const renamed = await w.create('Product', { name: 'Old name' });
    const trashed = await w.create('Product', { name: 'Trashed' });
    await until(() => svc!.ctx.db.one('select count(*)::int as n from product_projection'), (r) => r.n === 3);
    await svc.close();
    svc = null;

    // Mutations nobody hears: straight SQL while the service is down.
    await sql(`update product set name = 'New name' where id = $1`, [renamed]);
    await sql(`update product set deleted_at = now() where id = $1`, [trashed]);
    await sql(`insert into product (id, tenant_id, name) values ('01OUTOFBAND', '', 'Out of band')`);
    await sql(`insert into product_projection (id, tenant_id, name) values ('01GHOST', '', 'ghost')`);
    expect(await sql('select count(*)::int as n from svc_events')).toEqual([{ n: 0 }]);

    svc = await startCatalog({ database, env: { SVC_HISTORY_POLICY: 'off', SVC_PROJECTION_SYNC: 'always' } });
    expect(await svc.ctx.db.one(compare)).toEqual({ missing: 0, extra: 0 });
    const names = await svc.ctx.db.map('select name from product_projection order by name', [], (r) => r.name);
    expect(names).toEqual(['Kept', 'New name', 'Out of band']);
    expect(kept).toBeTruthy();
    await svc.close();
    svc = null;
  });

  it('startup adds missing columns as nullable text and keeps existing and extra ones', async () => {
    await sql('alter table product_projection drop column price');
    await sql('alter table product_projection add column operator_note text');
    await sql(`update product_projection set operator_note = 'mine'`);
    svc = await startCatalog({ database });
    const columns = await svc.ctx.db.map(
      `select column_name, data_type, is_nullable from information_schema.columns where table_name = 'product_projection'`,
      [], (r) => r);
    expect(columns.find((c) => c.column_name === 'price')).toEqual({ column_name: 'price', data_type: 'text', is_nullable: 'YES' });
    expect(columns.find((c) => c.column_name === 'operator_note')).toBeTruthy();
    const notes = await svc.ctx.db.map('select operator_note from product_projection', [], (r) => r.operator_note);
    expect(notes).toEqual(['mine', 'mine', 'mine']);
    expect(await svc.ctx.db.one(compare)).toEqual({ missing: 0, extra: 0 });
    await svc.close();
    svc = null;
  });

  it('an incompatible existing column type stops the start with CURRENT_PROJECTION_SCHEMA_CONFLICT', async () => {
    await sql('alter table product_projection alter column price type integer using null');
    const failure = await startCatalog({ database }).then(() => null, (error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(failure!.message).toMatch(/^CURRENT_PROJECTION_SCHEMA_CONFLICT: column product_projection\.price is integer/);
    expect(failure!.message).not.toContain('\n');
    expect((failure as Error & { code?: string }).code).toBe('CURRENT_PROJECTION_SCHEMA_CONFLICT');
    await sql('alter table product_projection alter column price type text');
  });

  it('a projection table keyed by (tenant_id, id) (layout 3), that lost its key, stops the start with CURRENT_PROJECTION_SCHEMA_CONFLICT; keyed by id alone (layout 2) it serves', async () => {
    expect(await sql(`select pg_get_indexdef('product_projection_pkey'::regclass) as def`))
      .toEqual([{ def: expect.stringMatching(/\(tenant_id, id\)$/) }]);
    await sql('alter table product_projection drop constraint product_projection_pkey');
    // A unique index on id with a predicate does not make upserts by id safe either.
    await sql(`create unique index product_projection_partial_id on product_projection (id) where id <> ''`);
    const failure = await startCatalog({ database }).then(() => null, (error: Error) => error);
    expect(failure!.message).toBe('CURRENT_PROJECTION_SCHEMA_CONFLICT: product_projection has no primary key or unique index on (tenant_id, id) or on id');
    await sql('drop index product_projection_partial_id');
    await sql('create unique index product_projection_id on product_projection (id)');
    svc = await startCatalog({ database });
    expect(await svc.ctx.db.one(compare)).toEqual({ missing: 0, extra: 0 });
    await svc.close();
    svc = null;
  });
});
