/**
 * The four routes: access, limit and cursor, every filter narrows, paging
 * while writes continue, statistics, and tenant isolation on each route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { allEntries, clientFor, create, startAuditService, UPDATE, UPDATE_MANY, type Client } from './helpers.ts';

let service: TestService;
let managerA: Client;
let managerB: Client;
let salesA: Client;
let companyA: any;
let companyB: any;

beforeAll(async () => {
  service = await startAuditService();
  managerA = await clientFor(service, { role: 'Manager', tenantId: 'tenant-a', userId: 'manager-a' });
  managerB = await clientFor(service, { role: 'Manager', tenantId: 'tenant-b', userId: 'manager-b' });
  salesA = await clientFor(service, { role: 'Sales', tenantId: 'tenant-a', userId: 'sales-a' });
  companyA = await create(managerA, 'Company', { name: 'A-Corp', employees: 1 });
  await managerA.gql(UPDATE, { model: 'Company', id: companyA.id, data: { employees: 2 } });
  await create(salesA, 'Company', { name: 'A-Sales-Corp' });
  companyB = await create(managerB, 'Company', { name: 'B-Corp' });
});
afterAll(() => service?.close());

describe('access', () => {
  const routes = () => ['/audit/logs', `/audit/entity/Company/${companyA.id}/audit`, '/audit/statistics', '/audit/user/manager-a/activity'];

  it('401 without a token on all four', async () => {
    for (const path of routes()) expect((await fetch(`${service.url}${path}`)).status, path).toBe(401);
  });

  it('403 for roles other than Admin and Manager, except their own activity', async () => {
    for (const path of routes()) expect((await salesA.get(path)).status, path).toBe(403);
    const own = await salesA.get('/audit/user/sales-a/activity');
    expect(own.status).toBe(200);
    // Its create, and the four denials it was just given.
    expect(own.body.items.map((e: any) => e.action)).toEqual([...Array(4).fill('access.denied'), 'record.create']);
    expect((await salesA.get('/audit/user/manager-a/activity')).status).toBe(403);
  });

  it('Admin and Manager read all four', async () => {
    const admin = await clientFor(service, { role: 'Admin', tenantId: 'tenant-a', userId: 'admin-a' });
    for (const client of [managerA, admin]) for (const path of routes()) expect((await client.get(path)).status, path).toBe(200);
  });
});

describe('paging', () => {
  it('limit: default 50, above 200 clamped, 0, negative or not a number 400, bad cursor 400', async () => {
    const tag = `page-${Date.now()}`;
    for (let i = 0; i < 2; i++) await create(managerA, 'Company', { name: `${tag}-${i}`, employees: 0 });
    // One updateMany over 210 rows writes 210 entries.
    const rows = Array.from({ length: 210 }, (_, i) => [`${tag}-bulk-${i}`]);
    await service.ctx.db.none(
      `insert into "company" (id, tenant_id, name, employees) select 'bulk-' || n, 'tenant-a', n, 0 from unnest($1::text[]) n`,
      [rows.flat()],
    );
    expect((await managerA.gql(UPDATE_MANY, { model: 'Company', where: { name: { startsWith: `${tag}-bulk` } }, data: { employees: 1 } })).body.data.updateMany).toBe(210);
    expect((await managerA.get('/audit/logs')).body.items).toHaveLength(50);
    const clamped = await managerA.get('/audit/logs?limit=500');
    expect(clamped.status).toBe(200);
    expect(clamped.body.items).toHaveLength(200);
    expect(clamped.body.nextCursor).toEqual(expect.any(String));
    for (const bad of ['0', '-3', 'ten', '1.5']) {
      const r = await managerA.get(`/audit/logs?limit=${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.field).toBe('limit');
    }
    expect((await managerA.get('/audit/logs?cursor=not-a-cursor')).status).toBe(400);
    expect((await managerA.get('/audit/logs?from=yesterday')).status).toBe(400);
    expect((await managerA.get('/audit/logs?outcome=maybe')).status).toBe(400);
  });

  it('visits every entry once, newest first, while writes continue', async () => {
    const before = (await service.ctx.db.manyOrNone("select id::text from svc_audit where tenant_id = 'tenant-a'")).map((r) => r.id);
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) await create(managerA, 'Company', { name: `during-${Date.now()}-${written++}` });
    })();
    const seen: string[] = [];
    let cursor: string | null = null;
    try {
      do {
        const r = await managerA.get(`/audit/logs?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
        expect(r.status).toBe(200);
        seen.push(...r.body.items.map((e: any) => e.id));
        cursor = r.body.nextCursor;
        // Each page waits for a write to land first, so pages interleave with writes.
        const target = written + 1;
        while (written < target) await new Promise((resolve) => setImmediate(resolve));
      } while (cursor);
    } finally {
      writing = false;
      await writer;
    }
    expect(written).toBeGreaterThanOrEqual(2); // at least one write between two pages
    expect(new Set(seen).size).toBe(seen.length); // no entry twice
    for (const id of before) expect(seen).toContain(id); // none missed
    const numeric = seen.map(Number);
    expect(numeric).toEqual([...numeric].sort((a, b) => b - a)); // newest first
  });
});

describe('filters', () => {
  it('each filter narrows to matching entries', async () => {
    const all = await allEntries(managerA, '/audit/logs');
    const cases: Array<[string, (e: any) => boolean]> = [
      ['entityType=Company', (e) => e.entityType === 'Company'],
      [`entityId=${companyA.id}`, (e) => e.entityId === companyA.id],
      ['actorId=sales-a', (e) => e.actor.id === 'sales-a'],
      ['action=record.update', (e) => e.action === 'record.update'],
      ['outcome=success', (e) => e.outcome === 'success'],
    ];
    for (const [query, match] of cases) {
      const got = await allEntries(managerA, `/audit/logs?${query}`);
      expect(got.length, query).toBeGreaterThan(0);
      expect(got.length, query).toBeLessThanOrEqual(all.length);
      expect(got.every(match), query).toBe(true);
      expect(got.length, query).toBe(all.filter(match).length);
    }
    const denied = await allEntries(managerA, '/audit/logs?outcome=denied');
    expect(denied.every((e) => e.outcome === 'denied')).toBe(true);
    const narrowest = await allEntries(managerA, `/audit/logs?entityId=${companyA.id}&action=record.update`);
    expect(narrowest).toHaveLength(1);
  });

  it('from and to bound the time', async () => {
    const all = await allEntries(managerA, '/audit/logs');
    const pivot = all[Math.floor(all.length / 2)].occurredAt;
    const later = await allEntries(managerA, `/audit/logs?from=${pivot}`);
    const earlier = await allEntries(managerA, `/audit/logs?to=${pivot}`);
    expect(later.every((e) => e.occurredAt >= pivot)).toBe(true);
    expect(earlier.every((e) => e.occurredAt < pivot)).toBe(true);
    expect(later.length + earlier.length).toBe(all.length);
    expect(await allEntries(managerA, '/audit/logs?from=2001-01-01T00:00:00Z&to=2001-01-02T00:00:00Z')).toEqual([]);
  });

  it('the entity route: unknown model 404, an id without entries an empty list', async () => {
    expect((await managerA.get('/audit/entity/Spaceship/1/audit')).status).toBe(404);
    const none = await managerA.get('/audit/entity/Company/no-such-id/audit');
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ items: [], nextCursor: null });
    const trail = await managerA.get(`/audit/entity/Company/${companyA.id}/audit`);
    expect(trail.body.items.map((e: any) => e.action)).toEqual(['record.update', 'record.create']);
  });

  it('statistics add up, in one snapshot', async () => {
    const stats = (await managerA.get('/audit/statistics')).body;
    const all = await allEntries(managerA, '/audit/logs');
    expect(stats.total).toBe(all.length);
    const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
    expect(sum(stats.byAction)).toBe(stats.total);
    expect(sum(stats.byOutcome)).toBe(stats.total);
    expect(stats.byEntityType[0]).toEqual({ entityType: 'Company', count: all.filter((e) => e.entityType === 'Company').length });
    expect(stats.topActors[0]).toMatchObject({ actorId: 'manager-a', count: all.filter((e) => e.actor.id === 'manager-a').length });
    // No range given: the last STATISTICS_DEFAULT_DAYS (30) up to now.
    const [from, to] = [Date.parse(stats.range.from), Date.parse(stats.range.to)];
    expect(Math.abs(to - Date.now())).toBeLessThan(60_000);
    expect(to - from).toBe(30 * 86_400_000);
    const empty = (await managerA.get('/audit/statistics?from=2001-01-01T00:00:00.000Z&to=2001-01-02T00:00:00.000Z')).body;
    expect(empty).toEqual({ total: 0, byAction: {}, byOutcome: {}, byEntityType: [], topActors: [], range: { from: '2001-01-01T00:00:00.000Z', to: '2001-01-02T00:00:00.000Z' } });
    // `to` alone: the 30 days before it.
    const before = (await managerA.get('/audit/statistics?to=2001-02-01T00:00:00.000Z')).body;
    expect(before.range).toEqual({ from: '2001-01-02T00:00:00.000Z', to: '2001-02-01T00:00:00.000Z' });
  });

  it('statistics read a bounded range: longer than 92 days, or reversed, is 400 VALIDATION_ERROR', async () => {
    const longest = await managerA.get('/audit/statistics?from=2001-01-01T00:00:00.000Z&to=2001-04-03T00:00:00.000Z');
    expect(longest.status).toBe(200);
    for (const [query, field] of [
      ['from=2001-01-01T00:00:00.000Z&to=2001-04-03T00:00:00.001Z', 'from'],
      ['from=2000-01-01T00:00:00.000Z', 'from'],
      ['from=2001-01-02T00:00:00.000Z&to=2001-01-01T00:00:00.000Z', 'from'],
    ]) {
      const refused = await managerA.get(`/audit/statistics?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body, query).toMatchObject({ code: 'VALIDATION_ERROR', field });
    }
  });
});

describe('tenant isolation', () => {
  it('no route shows another tenant\'s entries', async () => {
    const logsB = await allEntries(managerB, '/audit/logs');
    expect(logsB.length).toBeGreaterThan(0);
    expect(logsB.every((e) => e.tenantId === 'tenant-b')).toBe(true);
    expect((await allEntries(managerA, '/audit/logs')).every((e) => e.tenantId === 'tenant-a')).toBe(true);
    expect((await managerB.get(`/audit/entity/Company/${companyA.id}/audit`)).body.items).toEqual([]);
    expect((await managerB.get('/audit/user/manager-a/activity')).body.items).toEqual([]);
    const statsB = (await managerB.get('/audit/statistics')).body;
    expect(statsB.total).toBe(logsB.length);
    expect(statsB.topActors.map((a: any) => a.actorId)).toEqual(['manager-b']);
  });

  it('a tenant-bound user naming another tenant is 403; a global Admin acts in the tenant it names', async () => {
    for (const path of ['/audit/logs', '/audit/statistics', `/audit/entity/Company/${companyB.id}/audit`, '/audit/user/manager-a/activity']) {
      expect((await managerA.get(path, { 'x-tenant-id': 'tenant-b' })).status, path).toBe(403);
    }
    const operator = await clientFor(service, { role: 'Admin', userId: 'operator', header: 'tenant-b' });
    const seen = await allEntries(operator, '/audit/logs');
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((e) => e.tenantId === 'tenant-b')).toBe(true);
    const global = await clientFor(service, { role: 'Admin', userId: 'operator' });
    expect((await allEntries(global, '/audit/logs')).every((e) => e.tenantId === null)).toBe(true);
  });
});
