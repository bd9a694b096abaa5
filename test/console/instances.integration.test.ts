/**
 * GET /meta/instances (the console's overview, CONTRACT section 16: "health,
 * instances, ..."): two service instances on one database both listed, with
 * host, pid, start, last heartbeat, schema migration and staleness from the
 * registry; Admin of the global scope only (a tenant's Admin, the operator
 * acting in a tenant, other roles: 403; no token: 401); errors through the
 * one renderer.
 */
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryOnce } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call, userClient } from '../jobs/helpers.ts';

// Heartbeats every 10 minutes: no instance reaps the stale row this test plants while it runs.
const ENV = { SVC_REALTIME_HEARTBEAT_MS: '600000' };

let first: TestService;
let second: TestService;

beforeAll(async () => {
  first = await startTestService({ env: ENV });
  second = await startTestService({ env: ENV, database: first.database });
}, 60_000);
afterAll(async () => {
  await second?.close();
  await first?.close();
});

interface Instance {
  id: string; host: string | null; pid: number | null; startedAt: string; lastHeartbeatAt: string; secondsSinceHeartbeat: number;
  schemaMigration: string | null; olderSchema: boolean; ttlMs: number; stale: boolean; self: boolean;
}

describe('GET /meta/instances', () => {
  it('lists both instances of one database, each marked as the answering one by itself', async () => {
    const fromFirst = await userClient(first, 'Admin', 'root')('GET', '/meta/instances');
    expect(fromFirst.status).toBe(200);
    const listed = fromFirst.body.instances as Instance[];
    expect(listed).toHaveLength(2);
    for (const instance of listed) {
      expect(instance).toMatchObject({ host: hostname(), pid: process.pid, stale: false, olderSchema: false, ttlMs: 1_800_000 });
      expect(instance.startedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(instance.lastHeartbeatAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(instance.secondsSinceHeartbeat).toBeGreaterThanOrEqual(0);
      expect(instance.schemaMigration).toBe(fromFirst.body.schemaMigration);
    }
    expect(fromFirst.body.schemaMigration).toMatch(/^\d{4}_.*\.sql$/);
    expect(listed.filter((i) => i.self).map((i) => i.id)).toEqual([fromFirst.body.self]);
    const fromSecond = await userClient(second, 'Admin', 'root')('GET', '/meta/instances');
    expect(fromSecond.body.self).not.toBe(fromFirst.body.self);
    expect((fromSecond.body.instances as Instance[]).map((i) => i.id).sort()).toEqual(listed.map((i) => i.id).sort());
  });

  it('marks an instance silent past its TTL as stale, and one of an older build as olderSchema', async () => {
    await queryOnce(first.database.url, `insert into svc_realtime_instances (instance_id, schema_migration, ttl_ms, host, pid, started_at, seen_at)
      values ('gone-1', '0000_before.sql', 60000, 'old-host', 4242, now() - interval '2 hours', now() - interval '1 hour')`);
    try {
      const reply = await userClient(first, 'Admin', 'root')('GET', '/meta/instances');
      const gone = (reply.body.instances as Instance[]).find((i) => i.id === 'gone-1');
      expect(gone).toMatchObject({ host: 'old-host', pid: 4242, stale: true, olderSchema: true, self: false, ttlMs: 60000 });
      expect(gone!.secondsSinceHeartbeat).toBeGreaterThan(3500);
      expect((reply.body.instances as Instance[])[0].id).toBe('gone-1'); // oldest first
    } finally {
      await queryOnce(first.database.url, `delete from svc_realtime_instances where instance_id = 'gone-1'`);
    }
  });

  it('is for the Admin of the global scope: 401 without a token, 403 for other roles, a tenant\'s Admin and the operator in a tenant', async () => {
    const anonymous = await call(first.url, 'GET', '/meta/instances');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toHaveProperty('error');
    for (const role of ['Manager', 'Viewer'] as const) {
      const reply = await userClient(first, role)('GET', '/meta/instances');
      expect(reply.status, role).toBe(403);
    }
    const tenantAdmin = await userClient(first, 'Admin', 'admin-t1', 't1')('GET', '/meta/instances');
    expect(tenantAdmin.status).toBe(403);
    expect(tenantAdmin.body.error).toMatch(/global scope/);
    const forged = await userClient(first, 'Admin', 'admin-t1', 't1')('GET', '/meta/instances', undefined, { 'x-tenant-id': 't2' });
    expect(forged.status).toBe(403);
    const operatorInTenant = await userClient(first, 'Admin', 'root')('GET', '/meta/instances', undefined, { 'x-tenant-id': 't1' });
    expect(operatorInTenant.status).toBe(403);
  });
});
