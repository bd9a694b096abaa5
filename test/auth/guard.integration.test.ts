/**
 * The role checks every plane uses (runtime/auth/guard.ts): "user JWT",
 * "Admin role", "Admin or Manager"; 401 for missing or invalid credentials,
 * 403 for a valid caller without the role. Also tenant resolution.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES } from '../../runtime/ir/types.ts';
import {
  principalOf, requireAdmin, requireAdminOrManager, requireUser,
} from '../../runtime/auth/index.ts';
import { requestScope } from '../../runtime/tenancy/index.ts';
import type { TestService } from '../helpers/service.ts';
import { call, get, startOwnService } from './helpers.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startOwnService();
  const auth = svc.ctx.services.auth;
  const ok = (koa: { body: unknown; state: { principal?: unknown } }) => void (koa.body = { ok: true });
  svc.ctx.router.get('/guard-test/user', requireUser(auth), ok);
  svc.ctx.router.get('/guard-test/admin', requireAdmin(auth), ok);
  svc.ctx.router.get('/guard-test/staff', requireAdminOrManager(auth), ok);
  svc.ctx.router.get('/guard-test/tenant', async (koa) => {
    koa.body = { tenant: requestScope(koa, await principalOf(koa, auth)).tenantId };
  });
});
afterAll(async () => {
  await svc?.close();
});

describe('guards', () => {
  it('answer 401 with {error} without a token, with a malformed header or a bad token', async () => {
    for (const path of ['/guard-test/user', '/guard-test/admin', '/guard-test/staff']) {
      const none = await get(svc.url, path);
      expect(none.status).toBe(401);
      expect(none.body).toEqual({ error: expect.any(String), code: expect.any(String) });
      expect((await call(svc.url, 'GET', path, { headers: { authorization: 'Basic abc' } })).status).toBe(401);
      expect((await get(svc.url, path, 'not.a.jwt')).status).toBe(401);
    }
  });

  it('"user JWT" admits every role; "Admin" only Admin; "Admin or Manager" those two, else 403', async () => {
    for (const role of ROLES) {
      const token = await svc.token({ role, userId: `guard-${role}` });
      expect((await get(svc.url, '/guard-test/user', token)).status).toBe(200);
      expect((await get(svc.url, '/guard-test/admin', token)).status).toBe(role === 'Admin' ? 200 : 403);
      expect((await get(svc.url, '/guard-test/staff', token)).status).toBe(['Admin', 'Manager'].includes(role) ? 200 : 403);
    }
    const forbidden = await get(svc.url, '/guard-test/admin', await svc.token({ role: 'Viewer', userId: 'guard-v' }));
    expect(forbidden.body).toEqual({ error: expect.any(String), code: 'FORBIDDEN' });
  });

  it('binds a tenant-bound user to its tenant (403 on another); others pick one with X-Tenant-ID', async () => {
    const bound = await svc.token({ role: 'Sales', userId: 'guard-bound', tenantId: 't1' });
    const free = await svc.token({ role: 'Admin', userId: 'guard-free' });
    expect((await get(svc.url, '/guard-test/tenant', bound)).body).toEqual({ tenant: 't1' });
    expect((await call(svc.url, 'GET', '/guard-test/tenant', { token: bound, headers: { 'x-tenant-id': 't1' } })).status).toBe(200);
    expect((await call(svc.url, 'GET', '/guard-test/tenant', { token: bound, headers: { 'x-tenant-id': 't2' } })).status).toBe(403);
    expect((await call(svc.url, 'GET', '/guard-test/tenant', { token: free, headers: { 'x-tenant-id': 't2' } })).body).toEqual({ tenant: 't2' });
    expect((await get(svc.url, '/guard-test/tenant', free)).body).toEqual({ tenant: null });
  });

  it('refuses X-Tenant-ID from a tenant-less user that is not an Admin (CONTRACT section 8)', async () => {
    const viewer = await svc.token({ role: 'Viewer', userId: 'guard-viewer' });
    const named = await call(svc.url, 'GET', '/guard-test/tenant', { token: viewer, headers: { 'x-tenant-id': 't2' } });
    expect(named.status).toBe(403);
    expect(named.body).toMatchObject({ code: 'FORBIDDEN' });
    expect((await get(svc.url, '/guard-test/tenant', viewer)).body).toEqual({ tenant: null });
  });
});
