import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { adminFetch, startCatalog, testDatabase, until, writer } from './helpers.ts';
import pg from 'pg';
import { openDatabase } from '../../runtime/db/index.ts';
import { pruneChanges } from '../../runtime/events/history.ts';

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

describe('svc_changes sweep', () => {
  it('the sweep of svc_changes deletes what is older than a day, however long it waits (no statement time limit)', async () => {
    const database = await testDatabase();
    const svc = await startCatalog({ database, env: { SVC_HISTORY_POLICY: 'off' } });
    try {
      await svc.ctx.db.none('delete from svc_changes');
      await writer(svc.ctx).create('Product', { name: 'Old change' });
      await writer(svc.ctx).create('Product', { name: 'New change' });
      await svc.ctx.db.none(`update svc_changes set occurred_at = now() - interval '2 days' where seq = (select min(seq) from svc_changes)`);
      // A pool with a 100 ms limit, and the old row locked by another session for longer than that.
      const limited = await openDatabase({ url: database.url, statementTimeoutMs: 100, applicationName: 'svc-gen-prune-test' });
      const holder = new pg.Client({ connectionString: database.url });
      await holder.connect();
      try {
        await holder.query('begin');
        await holder.query('select 1 from svc_changes where seq = (select min(seq) from svc_changes) for update');
        const pruning = pruneChanges(limited.db);
        const waitedPastLimit = async () => (await holder.query(`select count(*)::int as n from pg_stat_activity
          where application_name = 'svc-gen-prune-test' and wait_event_type = 'Lock' and clock_timestamp() - query_start > interval '300 ms'`)).rows[0].n;
        const deadline = Date.now() + 5_000;
        while ((await waitedPastLimit()) === 0 && Date.now() < deadline);
        await holder.query('rollback');
        expect(await pruning).toBe(1);
      } finally {
        await holder.end();
        await limited.close();
      }
      expect(await svc.ctx.db.one('select count(*)::int as n from svc_changes')).toEqual({ n: 1 });
    } finally {
      await svc.close();
      await database.drop();
    }
  });
});

describe('history policy retained', () => {
  it('prunes model events older than the retention from the start and records the gap; recent ones stay', async () => {
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
      // The start's sweep runs in the background (a backlog does not delay the start): wait for its result.
      const started = svc;
      const left = await until(() => started.ctx.db.map('select stream_type from svc_events order by stream_type', [], (r) => r.stream_type),
        (types) => types.length === 2, 10_000);
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
