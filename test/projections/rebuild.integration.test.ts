import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { defineProjection, type ProjectionEvent } from '../../runtime/projections/index.ts';
import { adminFetch, startCatalog, until, writer } from './helpers.ts';

const rebuild = (svc: TestService) => adminFetch(svc, '/projections/rebuild', { method: 'POST' });
const snapshot = (svc: TestService) => svc.ctx.db.any('select id, name, price, status from product_projection order by id');
const baseState = (svc: TestService) => svc.ctx.db.any(
  `select id, name, coalesce(price::text, '') as price, status from product where deleted_at is null order by id`);

/** A custom projection counting events per record, in a table of its own. */
function counter(options: { failAfter?: number; transactional?: boolean } = {}) {
  let seen = 0;
  return defineProjection({
    name: 'product_event_counts',
    sourceModel: 'Product',
    transactionalRebuild: options.transactional ?? true,
    async reset(tx) {
      seen = 0;
      await tx.none('delete from test_event_counts');
    },
    async apply(event: ProjectionEvent, tx) {
      seen += 1;
      if (event.replay && options.failAfter !== undefined && seen > options.failAfter) throw new Error('boom: select 1 from secret');
      await tx.none(
        `insert into test_event_counts (record_id, n) values ($1, 1)
         on conflict (record_id) do update set n = test_event_counts.n + 1`, [event.recordId]);
    },
  });
}

async function seed(svc: TestService): Promise<string[]> {
  const w = writer(svc.ctx);
  await svc.ctx.db.none('create table if not exists test_event_counts (record_id text primary key, n int not null)');
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push(await w.create('Product', { name: `P${i}`, price: i * 1.5, status: 'published' }));
  await w.update('Product', ids[0], { name: 'P0 renamed', price: null });
  await w.lifecycle('Product', ids[1], 'Deleted');
  await w.lifecycle('Product', ids[2], 'Deleted');
  await w.lifecycle('Product', ids[2], 'Restored');
  await w.lifecycle('Product', ids[3], 'HardDeleted');
  await until(() => snapshot(svc), (rows) => rows.length === 3);
  if (svc.ctx.projections.length > 0) {
    // The custom projection hears the same 10 changes live; let it settle.
    await until(() => svc.ctx.db.one('select coalesce(sum(n), 0)::int as n from test_event_counts'), (r) => r.n === 10);
  }
  return ids;
}

async function tamper(svc: TestService, id: string) {
  await svc.ctx.db.none(`update product_projection set name = 'tampered' where id = $1`, [id]);
  await svc.ctx.db.none(`insert into product_projection (id, tenant_id, name) values ('01STRAY', '', 'stray')`);
}

describe('POST /projections/rebuild', () => {
  let svc: TestService;
  let ids: string[];

  beforeAll(async () => {
    svc = await startCatalog({ projections: [counter()] });
    ids = await seed(svc);
  });
  afterAll(async () => svc?.close());

  it('401 without auth, 403 for a non-admin, before anything changes', async () => {
    await tamper(svc, ids[0]);
    expect((await fetch(`${svc.url}/projections/rebuild`, { method: 'POST' })).status).toBe(401);
    const sales = await svc.token({ role: 'Sales' });
    const res = await fetch(`${svc.url}/projections/rebuild`, { method: 'POST', headers: { authorization: `Bearer ${sales}` } });
    expect(res.status).toBe(403);
    expect((await snapshot(svc)).find((r) => r.id === ids[0])?.name).toBe('tampered');
  });

  it('replays the event log into every projection and answers {status, count}', async () => {
    await svc.ctx.db.none('delete from test_event_counts');
    const res = await rebuild(svc);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'rebuilt', count: 4 });
    expect(await snapshot(svc)).toEqual(await baseState(svc));
    const full = await svc.ctx.db.one(`select * from product_projection where id = $1`, [ids[4]]);
    const synced = await svc.ctx.db.one(
      `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as c from product where id = $1`, [ids[4]]);
    expect(full).toMatchObject({ tenant_id: '', price: '6', status: 'published', created_at: synced.c });
    const counts = await svc.ctx.db.map('select record_id, n from test_event_counts order by record_id', [], (r) => [r.record_id, r.n]);
    expect(Object.fromEntries(counts)).toEqual({ [ids[0]]: 2, [ids[1]]: 2, [ids[2]]: 3, [ids[3]]: 2, [ids[4]]: 1 });
  });

  it('live changes reach a custom projection once', async () => {
    await writer(svc.ctx).update('Product', ids[4], { name: 'P4 live' });
    const n = await until(() => svc.ctx.db.one('select n from test_event_counts where record_id = $1', [ids[4]]), (r) => r.n === 2);
    expect(n).toEqual({ n: 2 });
  });
});

describe('a rebuild that fails half-way', () => {
  it('rolls back every projection and answers 503 PROJECTION_REBUILD_FAILED without SQL', async () => {
    const svc = await startCatalog({ projections: [counter({ failAfter: 4 })] });
    try {
      const ids = await seed(svc);
      await tamper(svc, ids[0]);
      const countsBefore = await svc.ctx.db.any('select * from test_event_counts order by record_id');
      const res = await rebuild(svc);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code).toBe('PROJECTION_REBUILD_FAILED');
      expect(typeof body.message).toBe('string');
      expect(JSON.stringify(body)).not.toMatch(/select|boom|secret/i);
      // The built-in projection was cleared and replayed before the custom one failed: all of it is undone.
      const rows = await snapshot(svc);
      expect(rows.find((r) => r.id === ids[0])?.name).toBe('tampered');
      expect(rows.find((r) => r.id === '01STRAY')).toBeTruthy();
      expect(await svc.ctx.db.any('select * from test_event_counts order by record_id')).toEqual(countsBefore);
      expect(await svc.ctx.db.any(`select * from svc_projection_state where last_rebuild_at is not null`)).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});

describe('rebuild refusals happen before any change', () => {
  it('409 PROJECTION_REBUILD_UNSUPPORTED for a custom projection without transactional rebuild', async () => {
    const svc = await startCatalog({ projections: [counter({ transactional: false })] });
    try {
      const ids = await seed(svc);
      await tamper(svc, ids[0]);
      const res = await rebuild(svc);
      expect(res.status).toBe(409);
      const body = await res.json();
      expect(body).toEqual({ code: 'PROJECTION_REBUILD_UNSUPPORTED', message: expect.stringContaining('product_event_counts') });
      expect((await snapshot(svc)).find((r) => r.id === ids[0])?.name).toBe('tampered');
    } finally {
      await svc.close();
    }
  });

  it('409 HISTORY_REPLAY_UNAVAILABLE under history retained', async () => {
    const svc = await startCatalog({ env: { SVC_HISTORY_POLICY: 'retained', SVC_HISTORY_RETAIN_DAYS: '30' } });
    try {
      const id = await writer(svc.ctx).create('Product', { name: 'kept' });
      await until(() => snapshot(svc), (rows) => rows.length === 1);
      await tamper(svc, id);
      const res = await rebuild(svc);
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual({ code: 'HISTORY_REPLAY_UNAVAILABLE', message: expect.stringContaining('retained') });
      expect((await snapshot(svc)).find((r) => r.id === id)?.name).toBe('tampered');
    } finally {
      await svc.close();
    }
  });
});

describe('custom projections across instances', () => {
  it('two instances on one database apply each live change once', async () => {
    const first = await startCatalog({ projections: [counter()] });
    const second = await startCatalog({ projections: [counter()], database: first.database });
    try {
      await first.ctx.db.none('create table if not exists test_event_counts (record_id text primary key, n int not null)');
      const w = writer(first.ctx);
      const count = (id: string) => first.ctx.db.one<{ n: number }>('select n from test_event_counts where record_id = $1', [id])
        .catch(() => ({ n: 0 }));
      const id = await w.create('Product', { name: 'Shared' });
      for (let i = 0; i < 4; i++) await w.update('Product', id, { name: `Shared ${i}` });
      await until(() => count(id), (r) => r.n >= 5);
      // A barrier instead of a pause: a later change applied on the shared cursor,
      // and neither instance with anything left to apply.
      const marker = await w.create('Product', { name: 'Barrier' });
      await until(() => count(marker), (r) => r.n >= 1);
      for (const svc of [first, second]) await until(async () => svc.ctx.services.projections.stats(), (s) => s.pending === 0);
      expect(await count(id)).toEqual({ n: 5 });
      expect(await count(marker)).toEqual({ n: 1 });
    } finally {
      await second.close();
      await first.close();
    }
  });
});
