import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { startCatalog, testDatabase, until, writer } from '../projections/helpers.ts';

const ENV = {
  SVC_PUBLIC_READ_MODELS: 'Product,Secret,Ghost',
  SVC_PUBLIC_READ_FIELDS_Product: 'status,vendor,name',
  SVC_PUBLIC_READ_FILTER_Product: 'status:published',
};

interface Item { id: string; name?: string; status?: string; price?: string; order?: string; vendorId?: string }

describe('GET /public/records/{model}', () => {
  let svc: TestService | null = null;
  let database: TestDatabase;
  let ids: Record<string, string>;
  let vendor: string;

  const get = async (path: string, init?: RequestInit) => fetch(`${svc!.url}${path}`, init);
  const items = async (path: string): Promise<Item[]> => {
    const res = await get(path);
    expect(res.status).toBe(200);
    return ((await res.json()) as { items: Item[] }).items;
  };

  beforeAll(async () => {
    database = await testDatabase();
    svc = await startCatalog({ env: ENV, database });
    const w = writer(svc.ctx);
    vendor = await w.create('Vendor', { name: 'Acme' });
    ids = {
      a: await w.create('Product', { name: 'Alpha', status: 'published', price: 10, order: 1, secretNote: 'hush', vendorId: vendor }),
      b: await w.create('Product', { name: 'Beta', status: 'published', price: 20 }),
      draft: await w.create('Product', { name: 'Draft', status: 'draft' }),
      trashed: await w.create('Product', { name: 'Trashed', status: 'published' }),
      tenant: await w.create('Product', { name: 'Tenant', status: 'published' }, 'tenant-1'),
    };
    for (let i = 0; i < 110; i++) await svc.ctx.db.none(
      `insert into product (id, tenant_id, name, status) values ($1, '', $2, 'published')`, [`01ZZBULK${String(i).padStart(4, '0')}`, `Bulk ${i}`]);
    await w.lifecycle('Product', ids.trashed, 'Deleted');
    await svc.close();
    svc = null;
    // Rows written behind the service's back: the resync mode copies them at start (ADR 021).
    svc = await startCatalog({ env: { ...ENV, SVC_PROJECTION_SYNC: 'always' }, database });
  });
  afterAll(async () => {
    await svc?.close();
    await database?.drop();
  });

  it('needs no credentials and returns exactly the approved fields (no id, tenant or timestamp), as text', async () => {
    const list = await items('/public/records/Product?name=Alpha');
    expect(list).toEqual([{ name: 'Alpha', status: 'published', price: '10', order: '1', vendorId: vendor }]);
    expect(JSON.stringify(list)).not.toContain('hush');
  });

  it('answers 400 VALIDATION_ERROR naming the filter for a NUL character, never a 500', async () => {
    for (const path of ['/public/records/Product?name=%00', '/public/records/Product?name=a%00b&status=x']) {
      const res = await get(path);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR', field: 'name' });
    }
  });

  it('a model lacking publicRead, lacking the allowlist, or unknown: the same 404 as an unknown model', async () => {
    const unknown = await get('/public/records/Nope');
    const notAllowlisted = await get('/public/records/Vendor'); // publicRead in schema, not in SVC_PUBLIC_READ_MODELS
    const notDeclared = await get('/public/records/Secret'); // allowlisted, no publicRead in schema
    const ghost = await get('/public/records/Ghost'); // allowlisted, not a model
    const bodies = await Promise.all([unknown, notAllowlisted, notDeclared, ghost].map((r) => r.text()));
    for (const res of [unknown, notAllowlisted, notDeclared, ghost]) {
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toBe(unknown.headers.get('content-type'));
    }
    expect(new Set(bodies)).toEqual(new Set(['{"error":"not found","code":"NOT_FOUND"}']));
    const nowhere = await get('/no/such/path');
    expect(await nowhere.text()).toBe(bodies[0]);
  });

  it('never returns soft-deleted rows, other tenants or rows the fixed filter excludes', async () => {
    const all = await items('/public/records/Product');
    const names = all.map((i) => i.name);
    expect(names).toContain('Alpha');
    expect(names).not.toContain('Trashed');
    expect(names).not.toContain('Tenant');
    expect(names).not.toContain('Draft');
  });

  it('fixed filters win over client filters; unlisted parameters are ignored', async () => {
    expect(await items('/public/records/Product?status=draft&limit=5')).toEqual(
      (await items('/public/records/Product?limit=5')));
    expect((await items('/public/records/Product?status=draft')).every((i) => i.status === 'published')).toBe(true);
    // price is not in SVC_PUBLIC_READ_FIELDS_Product: ignored, not a 400
    expect(await items('/public/records/Product?price=20&name=Beta')).toEqual([expect.objectContaining({ name: 'Beta' })]);
    expect(await items('/public/records/Product?vendorId=' + vendor)).toEqual([expect.objectContaining({ name: 'Alpha' })]);
  });

  it('limit defaults to 100 and is clamped to 1..100; garbage means the default', async () => {
    expect((await items('/public/records/Product')).length).toBe(100);
    expect((await items('/public/records/Product?limit=0')).length).toBe(1);
    expect((await items('/public/records/Product?limit=-5')).length).toBe(1);
    expect((await items('/public/records/Product?limit=999')).length).toBe(100);
    expect((await items('/public/records/Product?limit=7')).length).toBe(7);
    expect((await items('/public/records/Product?limit=abc')).length).toBe(100);
  });

  it('offers no mutation and no GraphQL', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await get('/public/records/Product', {
        method, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Injected' }) });
      expect([404, 405]).toContain(res.status);
    }
    expect(await svc!.ctx.db.one(`select count(*)::int as n from product where name = 'Injected'`)).toEqual({ n: 0 });
    expect((await get('/public/records/Product/graphql')).status).toBe(404);
  });

  it('follows live changes', async () => {
    const w = writer(svc!.ctx);
    const id = await w.create('Product', { name: 'Gamma', status: 'published' });
    expect(await until(() => items('/public/records/Product?name=Gamma'), (l) => l.length === 1)).toHaveLength(1);
    await w.lifecycle('Product', id, 'Deleted');
    expect(await items('/public/records/Product?name=Gamma')).toEqual([]);
  });
});

describe('public read edges', () => {
  it('a soft delete nobody announced is still hidden (the base row is checked)', async () => {
    const svc = await startCatalog({ env: ENV });
    try {
      const id = await writer(svc.ctx).create('Product', { name: 'Silent', status: 'published' });
      await until(() => svc.ctx.db.oneOrNone('select 1 from product_projection where id = $1', [id]), (r) => r !== null);
      await svc.ctx.db.none('update product set deleted_at = now() where id = $1', [id]); // no event, no notice
      const res = await fetch(`${svc.url}/public/records/Product?name=Silent`);
      expect(await res.json()).toEqual({ items: [] });
    } finally {
      await svc.close();
    }
  });

  it('is rate limited like any other path', async () => {
    const svc = await startCatalog({ env: { ...ENV, RATE_LIMIT_RPS: '3' } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await fetch(`${svc.url}/public/records/Product`)).status);
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      expect(statuses.at(-1)).toBe(429);
    } finally {
      await svc.close();
    }
  });
});

describe('public read configuration', () => {
  it('an unknown field in SVC_PUBLIC_READ_FIELDS_<Model> stops the start naming the variable', async () => {
    const failure = await startCatalog({ env: { SVC_PUBLIC_READ_MODELS: 'Product', SVC_PUBLIC_READ_FIELDS_Product: 'nope' } })
      .then((svc) => svc.close().then(() => null), (error: Error) => error);
    expect(failure?.message).toMatch(/^SVC_PUBLIC_READ_FIELDS_Product .*"nope"/);
  });
});
