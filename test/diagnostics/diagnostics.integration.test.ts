import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
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
});
