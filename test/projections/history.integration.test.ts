import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { adminFetch, startCatalog, testDatabase, until, writer } from './helpers.ts';

const modelEvents = (svc: TestService) =>
  svc.ctx.db.one(`select count(*)::int as n from svc_events where stream_type in ('Product', 'Vendor', 'Secret')`);
const gaps = (svc: TestService) => svc.ctx.db.map('select model, reason from svc_history_coverage order by model', [], (r) => r);

describe('history policy off', () => {
  let database: TestDatabase;
  let svc: TestService | null = null;
  beforeAll(async () => {
    database = await testDatabase();
  });
  afterAll(async () => {
    await svc?.close();
    await database.drop();
  });

  it('writes no model event, still notifies (the projection refreshes) and records a persistent gap', async () => {
    svc = await startCatalog({ database, env: { SVC_HISTORY_POLICY: 'off' } });
    const id = await writer(svc.ctx).create('Product', { name: 'Unlogged' });
    const row = await until(() => svc!.ctx.db.oneOrNone('select name from product_projection where id = $1', [id]), (r) => r !== null);
    expect(row).toEqual({ name: 'Unlogged' });
    expect(await modelEvents(svc)).toEqual({ n: 0 });
    expect(await gaps(svc)).toEqual([{ model: 'Product', reason: 'policy off' }]);
    // Streams that are not models (jobs) are always kept.
    await svc.ctx.db.tx((t) => svc!.ctx.services.events.append(t, {
      streamType: 'Job', streamId: 'j1', eventType: 'JobEnqueued', data: {}, actorId: null, tenantId: null }));
    expect(await svc.ctx.db.one(`select count(*)::int as n from svc_events where stream_type = 'Job'`)).toEqual({ n: 1 });
    const res = await adminFetch(svc, '/projections/rebuild', { method: 'POST' });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { code: string }).code).toBe('HISTORY_REPLAY_UNAVAILABLE');
    await svc.close();
    svc = null;
  });

  it('switching back to full keeps the gap: replay stays refused for that model', async () => {
    svc = await startCatalog({ database, env: { SVC_HISTORY_POLICY: 'full' } });
    await writer(svc.ctx).create('Product', { name: 'Logged' });
    expect(await modelEvents(svc)).toEqual({ n: 1 });
    expect(await gaps(svc)).toEqual([{ model: 'Product', reason: 'policy off' }]);
    const res = await adminFetch(svc, '/projections/rebuild', { method: 'POST' });
    expect(res.status).toBe(409);
    const body = (await res.json()) as { code: string; message: string };
    expect(body).toEqual({ code: 'HISTORY_REPLAY_UNAVAILABLE', message: expect.stringContaining('Product (policy off') });
    // The live refresh is asynchronous (a durable consumer of the change feed): wait for it.
    const count = () => svc!.ctx.db.one('select count(*)::int as n from product_projection');
    expect(await until(count, (r) => r.n === 2)).toEqual({ n: 2 });
  });
});

describe('history policy retained', () => {
  it('prunes model events older than the retention at start and records the gap; recent ones stay', async () => {
    const database = await testDatabase();
    let svc = await startCatalog({ database });
    try {
      const w = writer(svc.ctx);
      const old = await w.create('Vendor', { name: 'Old' });
      await w.create('Product', { name: 'Recent' });
      await svc.ctx.db.none(`update svc_events set occurred_at = now() - interval '40 days' where stream_id = $1`, [old]);
      await svc.ctx.db.tx((t) => svc.ctx.services.events.append(t, {
        streamType: 'Job', streamId: 'j-old', eventType: 'JobEnqueued', data: {}, actorId: null, tenantId: null }));
      await svc.ctx.db.none(`update svc_events set occurred_at = now() - interval '40 days' where stream_type = 'Job'`);
      await svc.close();

      svc = await startCatalog({ database, env: { SVC_HISTORY_POLICY: 'retained', SVC_HISTORY_RETAIN_DAYS: '30' } });
      const left = await svc.ctx.db.map('select stream_type from svc_events order by stream_type', [], (r) => r.stream_type);
      expect(left).toEqual(['Job', 'Product']);
      expect(await gaps(svc)).toEqual([{ model: 'Vendor', reason: 'retention' }]);
    } finally {
      await svc.close();
      await database.drop();
    }
  });

  it('a periodic sweep prunes while the service runs', async () => {
    // 0.00002 days = 1.7 s of retention; the sweep runs every second.
    const svc = await startCatalog({ env: { SVC_HISTORY_POLICY: 'retained', SVC_HISTORY_RETAIN_DAYS: '0.00002' } });
    try {
      await writer(svc.ctx).create('Product', { name: 'Ephemeral history' });
      expect(await modelEvents(svc)).toEqual({ n: 1 });
      expect(await until(() => modelEvents(svc), (r) => r.n === 0, 6000)).toEqual({ n: 0 });
      expect(await gaps(svc)).toEqual([{ model: 'Product', reason: 'retention' }]);
    } finally {
      await svc.close();
    }
  });
});
