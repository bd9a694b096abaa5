/**
 * SVC_AUDIT_POLICY (full, metadata, off), SVC_AUDIT_RETAIN_DAYS, and what
 * /storage/diagnostics reports.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../runtime/config/index.ts';
import { AUDIT_RETENTION_LOCK_KEY, pruneAudit } from '../../runtime/audit/index.ts';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, startAuditService, UPDATE } from './helpers.ts';

const services: TestService[] = [];
afterAll(async () => {
  for (const service of services) await service.close();
});

async function start(env: Record<string, string>) {
  const service = await startAuditService({ env });
  services.push(service);
  return service;
}

describe('configuration', () => {
  it('validates both variables with a one-line message naming them', () => {
    for (const [name, value] of [['SVC_AUDIT_POLICY', 'some'], ['SVC_AUDIT_RETAIN_DAYS', '0'], ['SVC_AUDIT_RETAIN_DAYS', '2.5'], ['SVC_AUDIT_RETAIN_DAYS', 'week']]) {
      let error: unknown;
      try {
        loadConfig({ [name]: value });
      } catch (e) {
        error = e;
      }
      expect(error, `${name}=${value}`).toBeInstanceOf(ConfigError);
      expect((error as Error).message.startsWith(name)).toBe(true);
      expect((error as Error).message).not.toContain('\n');
    }
    expect(loadConfig({}).audit).toEqual({ policy: 'full', retainDays: null });
    expect(loadConfig({ SVC_AUDIT_POLICY: 'metadata', SVC_AUDIT_RETAIN_DAYS: '90' }).audit).toEqual({ policy: 'metadata', retainDays: 90 });
  });
});

describe('policy', () => {
  it('metadata keeps who did what, without changes, ip or user agent', async () => {
    const service = await start({ SVC_AUDIT_POLICY: 'metadata' });
    const manager = await clientFor(service, { role: 'Manager', userId: 'm1' });
    const company = await create(manager, 'Company', { name: 'Meta', employees: 1 });
    await manager.gql(UPDATE, { model: 'Company', id: company.id, data: { employees: 2 } });
    expect((await manager.get('/jobs/stats')).status).toBe(403);
    const items = (await manager.get('/audit/logs')).body.items;
    expect(items.map((e: any) => e.action)).toEqual(['access.denied', 'record.update', 'record.create']);
    for (const entry of items) {
      expect(entry).toMatchObject({ changes: null, ip: null, userAgent: null, actor: { id: 'm1' } });
      expect(entry.requestId).toEqual(expect.any(String));
    }
    const diagnostics = await (await clientFor(service, { role: 'Admin' })).get('/storage/diagnostics');
    expect(diagnostics.body.audit).toMatchObject({ enabled: true, policy: 'metadata', rows: 3 });
  });

  it('off writes nothing, and diagnostics say so', async () => {
    const service = await start({ SVC_AUDIT_POLICY: 'off' });
    const manager = await clientFor(service, { role: 'Manager' });
    const company = await create(manager, 'Company', { name: 'Off', employees: 1 });
    await manager.gql(UPDATE, { model: 'Company', id: company.id, data: { employees: 2 } });
    await manager.request('POST', '/jobs', { queue: 'q', kind: 'k' });
    expect((await manager.get('/jobs/stats')).status).toBe(403);
    expect((await service.ctx.db.one('select count(*)::int as n from svc_audit')).n).toBe(0);
    expect((await manager.get('/audit/logs')).body).toEqual({ items: [], nextCursor: null });
    const diagnostics = await (await clientFor(service, { role: 'Admin' })).get('/storage/diagnostics');
    expect(diagnostics.body.audit).toMatchObject({ enabled: false, policy: 'off', rows: 0 });
  });
});

describe('retention', () => {
  it('diagnostics report rows and bytes under full', async () => {
    const service = await start({});
    const admin = await clientFor(service, { role: 'Admin' });
    await create(admin, 'Company', { name: 'Counted' });
    const audit = (await admin.get('/storage/diagnostics')).body.audit;
    expect(audit).toMatchObject({ enabled: true, policy: 'full', rows: 1 });
    expect(audit.bytes).toBeGreaterThan(0);
  });

  it('removes only entries older than the retention, in batches, one sweeper at a time', async () => {
    const service = await start({});
    const { db } = service.ctx;
    const insert = (days: number, n: number) => db.none(
      `insert into svc_audit (id, occurred_at, tenant_id, actor_kind, action, outcome)
       select svc_audit_next_id(), now() - make_interval(days => $1), '', 'system', 'record.create', 'success' from generate_series(1, $2)`,
      [days, n],
    );
    await insert(40, 25);
    await insert(20, 7);
    await insert(0, 5);
    // Another instance holds the sweep: this one leaves it alone.
    await db.task(async (other) => {
      await other.one('select pg_advisory_lock($1)', [AUDIT_RETENTION_LOCK_KEY]);
      try {
        expect(await pruneAudit(db, 30, 10)).toBe(0);
      } finally {
        await other.one('select pg_advisory_unlock($1)', [AUDIT_RETENTION_LOCK_KEY]);
      }
    });
    expect(await pruneAudit(db, 30, 10)).toBe(25); // three batches of at most 10
    expect((await db.one('select count(*)::int as n from svc_audit')).n).toBe(12);
    expect(await pruneAudit(db, 10, 10)).toBe(7);
    expect((await db.one(`select count(*)::int as n from svc_audit where occurred_at > now() - interval '1 day'`)).n).toBe(5);
  });

  it('never blocks writers: a create commits while a sweep batch holds its rows', async () => {
    const service = await start({});
    const { db } = service.ctx;
    await db.none(
      `insert into svc_audit (id, occurred_at, tenant_id, actor_kind, action, outcome)
       select svc_audit_next_id(), now() - interval '40 days', '', 'system', 'record.create', 'success' from generate_series(1, 50)`,
    );
    const manager = await clientFor(service, { role: 'Manager' });
    await db.tx(async (t) => {
      // The sweep's statement, its transaction left open: its locks stay held.
      await t.one('select pg_try_advisory_xact_lock($1) as locked', [AUDIT_RETENTION_LOCK_KEY]);
      const gone = await t.one(
        `with doomed as (select id from svc_audit where occurred_at < now() - interval '30 days' for update skip locked),
         gone as (delete from svc_audit a using doomed d where a.id = d.id returning 1) select count(*)::int as n from gone`,
      );
      expect(gone.n).toBe(50);
      const created = await create(manager, 'Company', { name: 'During the sweep' });
      expect(created.id).toEqual(expect.any(String));
    });
    expect((await db.one('select count(*)::int as n from svc_audit')).n).toBe(1);
  });

  it('a service with SVC_AUDIT_RETAIN_DAYS sweeps at start', async () => {
    const first = await start({});
    await first.ctx.db.none(
      `insert into svc_audit (id, occurred_at, tenant_id, actor_kind, action, outcome) values
         (svc_audit_next_id(), now() - interval '3 days', '', 'system', 'record.create', 'success'),
         (svc_audit_next_id(), now(), '', 'system', 'record.create', 'success')`,
    );
    const second = await startAuditService({ database: first.database, env: { SVC_AUDIT_RETAIN_DAYS: '2' } });
    services.push(second);
    const deadline = Date.now() + 10_000;
    let left = -1;
    while (Date.now() < deadline) {
      left = (await second.ctx.db.one('select count(*)::int as n from svc_audit')).n;
      if (left === 1) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(left).toBe(1);
  });
});
