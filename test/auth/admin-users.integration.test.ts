/** The admin user API (CONTRACT section 5) and what disabling or re-roling a user does to live sessions. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestService } from '../helpers/service.ts';
import { call, get, post, startOwnService } from './helpers.ts';

let svc: TestService;
let admin: string;

beforeAll(async () => {
  svc = await startOwnService();
  admin = await svc.token({ role: 'Admin', userId: 'admin-1' });
});
afterAll(async () => {
  await svc?.close();
});

const patch = (id: string, body: unknown, token = admin) => call(svc.url, 'PATCH', `/auth/users/${id}`, { body, token });

describe('admin user API', () => {
  it('answers 401 without a token and 403 for a non-admin on every route', async () => {
    const viewer = await svc.token({ role: 'Manager', userId: 'manager-1' });
    for (const token of [undefined, viewer]) {
      const expected = token ? 403 : 401;
      expect((await post(svc.url, '/auth/users', { email: 'x@example.com', password: 'secret123' }, token)).status).toBe(expected);
      expect((await get(svc.url, '/auth/users', token)).status).toBe(expected);
      expect((await call(svc.url, 'PATCH', '/auth/users/whoever', { body: { role: 'Admin' }, token })).status).toBe(expected);
    }
  });

  it('creates (201), lists and patches users; never shows a hash', async () => {
    const created = await post(svc.url, '/auth/users', { email: 'Sam@Example.com', password: 'secret123', role: 'support', tenantId: 't1' }, admin);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.any(String), email: 'sam@example.com', role: 'support', tenant_id: 't1', disabled: false });
    const list = await get(svc.url, '/auth/users', admin);
    expect(list.status).toBe(200);
    expect(list.body.users.map((u: { email: string }) => u.email)).toContain('sam@example.com');
    expect(JSON.stringify(list.body)).not.toMatch(/argon2|password/);
    const changed = await patch(created.body.id, { role: 'Manager', tenantId: null });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ role: 'manager', tenant_id: null });
  });

  it('validates input: 409 duplicate email, 400 bad role / weak password / empty patch, 404 unknown user', async () => {
    await post(svc.url, '/auth/users', { email: 'dup@example.com', password: 'secret123' }, admin);
    expect((await post(svc.url, '/auth/users', { email: 'dup@example.com', password: 'secret123' }, admin)).status).toBe(409);
    expect((await post(svc.url, '/auth/users', { email: 'r@example.com', password: 'secret123', role: 'King' }, admin)).status).toBe(400);
    expect((await post(svc.url, '/auth/users', { email: 'w@example.com', password: 'short' }, admin)).status).toBe(400);
    expect((await patch('01UNKNOWNUSER0000000000000', { role: 'Admin' })).status).toBe(404);
    expect((await patch('01UNKNOWNUSER0000000000000', {})).status).toBe(400);
    expect((await patch('01UNKNOWNUSER0000000000000', { disabled: 'yes' })).status).toBe(400);
  });

  it('a disabled user cannot log in, refresh or use a live access token; re-enabling restores login', async () => {
    const created = await post(svc.url, '/auth/users', { email: 'off@example.com', password: 'secret123' }, admin);
    const login = await post(svc.url, '/auth/login', { email: 'off@example.com', password: 'secret123' });
    expect((await get(svc.url, '/auth/me', login.body.token)).status).toBe(200); // cached as live
    expect((await patch(created.body.id, { disabled: true })).body.disabled).toBe(true);
    expect((await get(svc.url, '/auth/me', login.body.token)).status).toBe(401);
    expect((await post(svc.url, '/auth/refresh', { refreshToken: login.body.refresh_token })).status).toBe(401);
    const denied = await post(svc.url, '/auth/login', { email: 'off@example.com', password: 'secret123' });
    expect(denied.status).toBe(403);
    await patch(created.body.id, { disabled: false });
    expect((await post(svc.url, '/auth/login', { email: 'off@example.com', password: 'secret123' })).status).toBe(200);
  });

  it('a role change applies to the live sessions of that user at once', async () => {
    const created = await post(svc.url, '/auth/users', { email: 'promo@example.com', password: 'secret123', role: 'Viewer' }, admin);
    const login = await post(svc.url, '/auth/login', { email: 'promo@example.com', password: 'secret123' });
    expect((await get(svc.url, '/auth/users', login.body.token)).status).toBe(403);
    await patch(created.body.id, { role: 'Admin' });
    expect((await get(svc.url, '/auth/users', login.body.token)).status).toBe(200);
    await patch(created.body.id, { role: 'Viewer' });
    expect((await get(svc.url, '/auth/users', login.body.token)).status).toBe(403);
  });
});
