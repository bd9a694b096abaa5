import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { recordStatements } from '../helpers/statements.ts';
import { adminFetch, startCatalog, until, writer } from '../projections/helpers.ts';

interface Report {
  cache: { enabled: boolean };
  history: { policy: string; models: Array<{ model: string; events: number; eventsIsEstimate: boolean; firstEventAt: string | null;
    lastEventAt: string | null; complete: boolean; gaps: Array<{ reason: string; since: string }> }> };
  feed: { head: { tx: string; seq: number }; failures: number; lastLagMs: number; maxLagMs: number;
    consumers: Array<{ name: string; position: { tx: string; seq: number }; behind: number; behindIsEstimate: boolean }> };
  projections: { refresh: { refreshed: number }; items: Array<{ name: string; status: string; rows: number | null; rowsIsEstimate: boolean;
    lagRows: number | null; verified?: { newest: number; checked: number; drift: number }; lastSyncAt: string | null }> };
  audit: { enabled: boolean; policy: string; rows: number; rowsIsEstimate: boolean; bytes: number };
}

describe('GET /storage/diagnostics', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startCatalog();
    const w = writer(svc.ctx);
    const id = await w.create('Product', { name: 'One' });
    await w.update('Product', id, { name: 'One!' });
    await w.create('Product', { name: 'Two' });
    await until(() => svc.ctx.db.one('select count(*)::int as n from product_projection'), (r) => r.n === 2);
  });
  afterAll(async () => svc?.close());

  it('401 without auth, 403 for a non-admin', async () => {
    expect((await fetch(`${svc.url}/storage/diagnostics`)).status).toBe(401);
    const manager = await svc.token({ role: 'Manager' });
    expect((await fetch(`${svc.url}/storage/diagnostics`, { headers: { authorization: `Bearer ${manager}` } })).status).toBe(403);
  });

  it('reports cache, per-model history coverage, projection lag and audit usage', async () => {
    const res = await adminFetch(svc, '/storage/diagnostics');
    expect(res.status).toBe(200);
    const report = (await res.json()) as Report;
    expect(report.cache).toEqual({ enabled: false });
    // The writer above goes around the records API; the entries are the denials of the test before.
    const audited = await svc.ctx.db.one('select count(*)::int as n from svc_audit');
    expect(report.audit).toMatchObject({ enabled: true, policy: 'full', rows: audited.n, rowsIsEstimate: false });
    expect(report.audit.bytes).toBeGreaterThan(0);
    expect(report.history.policy).toBe('full');
    const product = report.history.models.find((m) => m.model === 'Product')!;
    expect(product).toMatchObject({ events: 3, eventsIsEstimate: false, complete: true, gaps: [] });
    expect(Date.parse(product.firstEventAt!)).toBeLessThanOrEqual(Date.parse(product.lastEventAt!));
    expect(report.history.models.find((m) => m.model === 'Vendor')).toMatchObject({ events: 0, firstEventAt: null });
    const projection = report.projections.items.find((p) => p.name === 'product_projection')!;
    expect(projection).toMatchObject({ status: 'ready', rows: 2, rowsIsEstimate: false, lagRows: 0 });
    expect(projection.verified).toBeUndefined(); // no comparison unless asked for
    expect(projection.lastSyncAt).toMatch(/Z$/);
    expect(report.projections.refresh.refreshed).toBeGreaterThanOrEqual(2);
    // The change feed's reader: where it stands in the log and how far behind commits it reads.
    expect(report.feed.head.tx).toMatch(/^\d+$/);
    expect(report.feed).toMatchObject({ failures: 0, lastLagMs: expect.any(Number), maxLagMs: expect.any(Number) });
    // The durable consumers' cursors: the projections' one has applied every change.
    expect(report.feed.consumers.find((c) => c.name === 'projections:tables')).toMatchObject({ behindIsEstimate: false });
  });

  it('with ?verify=N, compares the newest N records with the projection and shows the drift; shows gaps in coverage', async () => {
    await svc.ctx.db.none(`update product_projection set name = 'stale' where name = 'Two'`);
    await svc.ctx.db.none(`insert into svc_history_coverage (model, reason) values ('Vendor', 'retention')`);
    const report = (await (await adminFetch(svc, '/storage/diagnostics?verify=100')).json()) as Report;
    // The stale row differs both ways (the base's row is missing from the projection, the projection's is extra).
    expect(report.projections.items.find((p) => p.name === 'product_projection')).toMatchObject({
      verified: { newest: 100, checked: 2, drift: 2 } });
    // Only the newest record is compared with verify=1: 'Two' is the newest.
    const one = (await (await adminFetch(svc, '/storage/diagnostics?verify=1')).json()) as Report;
    expect(one.projections.items.find((p) => p.name === 'product_projection')!.verified).toEqual({ newest: 1, checked: 1, drift: 2 });
    expect(report.history.models.find((m) => m.model === 'Vendor')).toMatchObject({
      complete: false, gaps: [{ reason: 'retention', since: expect.stringMatching(/Z$/) }] });
  });

  it('is read-only: no method deletes or resets anything', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const res = await adminFetch(svc, '/storage/diagnostics', { method });
      expect([404, 405]).toContain(res.status);
    }
    expect(await svc.ctx.db.one('select count(*)::int as n from svc_history_coverage')).toEqual({ n: 1 });
    expect(await svc.ctx.db.one('select count(*)::int as n from svc_events')).toEqual({ n: 3 });
  });

  it('400 VALIDATION_ERROR naming the parameter for a bad exactUpTo or verify, never a 500', async () => {
    const bad = ['exactUpTo=0', 'exactUpTo=100001', 'exactUpTo=1.5', 'exactUpTo=abc', 'exactUpTo=', 'verify=-1', 'verify=10001',
      'verify=1e3', 'verify=1&verify=2'];
    for (const query of bad) {
      const res = await adminFetch(svc, `/storage/diagnostics?${query}`);
      expect(res.status, query).toBe(400);
      const field = query.slice(0, query.indexOf('='));
      expect(await res.json(), query).toMatchObject({ code: 'VALIDATION_ERROR', field, error: expect.stringMatching(/whole number from 1 to \d+/) });
    }
    expect((await adminFetch(svc, '/storage/diagnostics?exactUpTo=100000&verify=10000')).status).toBe(200);
  });

  it('reads estimates above 10,000 rows, exact counts up to a bound when asked, and never scans a whole table', async () => {
    // 12,000 projection rows and 12,000 Vendor events behind the service's back, then the statistics of a big table.
    await svc.ctx.db.none(`insert into product_projection (id, tenant_id, name) select 'zz' || lpad(n::text, 6, '0'), '', 'bulk' from generate_series(1, 12000) n`);
    await svc.ctx.db.none(`insert into svc_events (id, stream_type, stream_id, version, event_type, tenant_id)
      select 'ev' || n, 'Vendor', 'v' || n, 1, 'Custom', '' from generate_series(1, 12000) n`);
    await svc.ctx.db.none('analyze product_projection; analyze svc_events');
    const recorder = recordStatements(svc.ctx.server);
    try {
      const report = (await (await adminFetch(svc, '/storage/diagnostics')).json()) as Report;
      const product = report.projections.items.find((p) => p.name === 'product_projection')!;
      expect(product.rowsIsEstimate).toBe(true);
      expect(product.rows).toBeGreaterThan(11_000);
      const vendor = report.history.models.find((m) => m.model === 'Vendor')!;
      expect(vendor).toMatchObject({ eventsIsEstimate: true });
      expect(vendor.events).toBeGreaterThan(11_000);
      // A model with few events is counted exactly (its estimate is small), beside the big one.
      expect(report.history.models.find((m) => m.model === 'Product')).toMatchObject({ events: 3, eventsIsEstimate: false });
      // No statement compares whole tables, and every count is bounded by a limit.
      const sent = recorder.last();
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.filter((s) => /\bexcept\b/i.test(s))).toEqual([]);
      expect(sent.filter((s) => /count\(\*\)/i.test(s) && !/\blimit\b/i.test(s))).toEqual([]);

      const exact = (await (await adminFetch(svc, '/storage/diagnostics?exactUpTo=20000')).json()) as Report;
      expect(exact.projections.items.find((p) => p.name === 'product_projection')).toMatchObject({ rows: 12_002, rowsIsEstimate: false });
      expect(exact.history.models.find((m) => m.model === 'Vendor')).toMatchObject({ events: 12_000, eventsIsEstimate: false });
      const capped = (await (await adminFetch(svc, '/storage/diagnostics?exactUpTo=100')).json()) as Report;
      const cappedProduct = capped.projections.items.find((p) => p.name === 'product_projection')!;
      expect(cappedProduct.rowsIsEstimate).toBe(true);
      expect(cappedProduct.rows).toBeGreaterThanOrEqual(100);
    } finally {
      recorder.restore();
      await svc.ctx.db.none(`delete from product_projection where id like 'zz%'; delete from svc_events where id like 'ev%'`);
    }
  });
});
