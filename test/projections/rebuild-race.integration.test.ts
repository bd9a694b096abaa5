/**
 * A rebuild while the live refresh is applying changes: the two never
 * interleave (the refresh holds the projections lock shared, the rebuild
 * exclusively), so the rebuild neither fails on a row the refresh wrote
 * between its delete and its insert nor loses one.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { adminFetch, startCatalog } from './helpers.ts';

const RECORDS = 20_000;
let svc: TestService;

beforeAll(async () => {
  svc = await startCatalog({ env: { SVC_LOG_LEVEL: 'error' } });
});
afterAll(() => svc?.close());

it('rebuilds while a burst of changes is being refreshed, and ends with every row once', { timeout: 120_000 }, async () => {
  // Rows and their events written behind the API's back: the feed's refresh consumer picks them up
  // while the rebuild below runs.
  await svc.ctx.db.none(`insert into product (id, tenant_id, name, status, price)
    select 'R' || lpad(g::text, 8, '0'), '', 'Product ' || g, 'published', g from generate_series(1, ${RECORDS}) g`);
  await svc.ctx.db.none(`insert into svc_events (id, stream_type, stream_id, version, event_type, tenant_id, data)
    select 'RC' || g, 'Product', 'R' || lpad(g::text, 8, '0'), 1, 'Created', '',
           jsonb_build_object('name', 'Product ' || g, 'status', 'published', 'price', g)
      from generate_series(1, ${RECORDS}) g`);
  svc.ctx.services.events.committed();
  const rebuilds = [await adminFetch(svc, '/projections/rebuild', { method: 'POST' }), await adminFetch(svc, '/projections/rebuild', { method: 'POST' })];
  expect(rebuilds.map((r) => r.status)).toEqual([200, 200]);
  const { n, distinct } = await svc.ctx.db.one<{ n: number; distinct: number }>(
    `select count(*)::int as n, count(distinct id)::int as distinct from product_projection where id like 'R%'`);
  expect({ n, distinct }).toEqual({ n: RECORDS, distinct: RECORDS });
});
