/**
 * The console over HTTP (CONTRACT section 16): the page at /console and at
 * any deep link, the CSP and headers on every console response, hashed
 * assets precompressed and immutable; SVC_CONSOLE=off is a 404. The browser
 * session: a login asking for the cookie gets the refresh token only in an
 * HttpOnly SameSite=Strict cookie scoped to /auth; a refresh by cookie needs
 * this service's Origin; logout clears the cookie. GET /media lists uploads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { ensureConsoleBuilt } from './helpers.ts';

const EMAIL = 'console-admin@example.com';
const PASSWORD = 'console-password-123';

let service: TestService;
let off: TestService | undefined;

beforeAll(async () => {
  ensureConsoleBuilt();
  service = await startTestService({ env: { ADMIN_EMAIL: EMAIL, ADMIN_PASSWORD: PASSWORD, RATE_LIMIT_RPS: '100000' } });
});
afterAll(async () => {
  await off?.close();
  await service?.close();
});

function expectConsoleHeaders(response: Response): void {
  const csp = response.headers.get('content-security-policy') ?? '';
  for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) expect(csp).toContain(directive);
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  expect(response.headers.get('x-content-type-options')).toBe('nosniff');
}

describe('serving the console', () => {
  it('answers the app at /console and at deep links, never cached, with the CSP', async () => {
    for (const path of ['/console', '/console/', '/console/jobs?status=dead', '/console/records/Company/01J0000000000000000000000X']) {
      const response = await fetch(service.url + path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toContain('text/html');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expectConsoleHeaders(response);
      const page = await response.text();
      expect(page).toMatch(/<script type="module" crossorigin src="\/console\/assets\/index-[\w-]+\.js"><\/script>/);
      expect(page).not.toMatch(/https?:\/\//);
    }
  });

  it('serves hashed assets precompressed (brotli, gzip, identity) and immutable; an unknown asset is 404', async () => {
    const page = await (await fetch(`${service.url}/console`)).text();
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(page)![1];
    const plain = await fetch(service.url + script, { headers: { 'accept-encoding': 'identity' } });
    const body = await plain.text();
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-type')).toContain('application/javascript');
    expect(plain.headers.get('content-encoding')).toBeNull();
    expectConsoleHeaders(plain);
    expect(body).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\//i);
    for (const encoding of ['br', 'gzip']) {
      const response = await fetch(service.url + script, { headers: { 'accept-encoding': encoding } });
      expect(response.headers.get('content-encoding')).toBe(encoding);
      expect(response.headers.get('vary')).toContain('Accept-Encoding');
      expect(await response.text()).toBe(body); // fetch decodes it
    }
    const missing = await fetch(`${service.url}/console/assets/nothing-here.js`);
    expect(missing.status).toBe(404);
    expectConsoleHeaders(missing);
    expect((await fetch(`${service.url}/console/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
  });

  it('is a 404 with SVC_CONSOLE=off', async () => {
    off = await startTestService({ env: { SVC_CONSOLE: 'off' } });
    expect((await fetch(`${off.url}/console`)).status).toBe(404);
    expect((await fetch(`${off.url}/console/jobs`)).status).toBe(404);
  });
});

const login = (body: Record<string, unknown>) => fetch(`${service.url}/auth/login`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: EMAIL, password: PASSWORD, ...body }),
});
const refresh = (headers: Record<string, string>) => fetch(`${service.url}/auth/refresh`, {
  method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{}',
});
const cookieOf = (response: Response) => /svc_refresh=([^;]*)/.exec(response.headers.get('set-cookie') ?? '')?.[1] ?? null;

describe('the browser session', () => {
  it('puts the refresh token in an HttpOnly, SameSite=Strict cookie scoped to /auth, not in the body', async () => {
    const response = await login({ cookie: true });
    expect(response.status).toBe(200);
    const body = await response.json() as { token?: string; refresh_token?: string };
    expect(body.token).toBeTypeOf('string');
    expect(body.refresh_token).toBeUndefined();
    const setCookie = response.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^svc_refresh=[\w-]+; Path=\/auth; HttpOnly; SameSite=Strict; Max-Age=\d+$/); // loopback: no Secure
    // Without the flag the API answers as before.
    const classic = await login({});
    expect((await classic.json() as { refresh_token?: string }).refresh_token).toBeTypeOf('string');
    expect(classic.headers.get('set-cookie')).toBeNull();
    expect((await login({ cookie: 'yes' })).status).toBe(400);
  });

  it('refreshes by cookie only with this service\'s Origin, rotating the cookie; the old cookie is then refused', async () => {
    const cookie = cookieOf(await login({ cookie: true }))!;
    expect((await refresh({ cookie: `svc_refresh=${cookie}` })).status).toBe(403);
    expect((await refresh({ cookie: `svc_refresh=${cookie}`, origin: 'https://evil.example' })).status).toBe(403);
    const ok = await refresh({ cookie: `svc_refresh=${cookie}`, origin: service.url });
    expect(ok.status).toBe(200);
    const body = await ok.json() as { token?: string; refresh_token?: string };
    expect(body.token).toBeTypeOf('string');
    expect(body.refresh_token).toBeUndefined();
    const rotated = cookieOf(ok)!;
    expect(rotated).not.toBe(cookie);
    const me = await fetch(`${service.url}/auth/me`, { headers: { authorization: `Bearer ${body.token}` } });
    expect((await me.json() as { email: string }).email).toBe(EMAIL);
    // Reuse of the first cookie revokes the session (CONTRACT section 5), and the reply clears the cookie.
    const reused = await refresh({ cookie: `svc_refresh=${cookie}`, origin: service.url });
    expect(reused.status).toBe(401);
    expect(reused.headers.get('set-cookie')).toMatch(/^svc_refresh=; .*Max-Age=0/);
    expect((await refresh({ cookie: `svc_refresh=${rotated}`, origin: service.url })).status).toBe(401);
    // No cookie and no token: the body's refreshToken is required, as before.
    expect((await refresh({ origin: service.url })).status).toBe(400);
  });

  it('logout revokes the session and clears the cookie', async () => {
    const response = await login({ cookie: true });
    const cookie = cookieOf(response)!;
    const { token } = await response.json() as { token: string };
    const out = await fetch(`${service.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}`, cookie: `svc_refresh=${cookie}` } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^svc_refresh=; Path=\/auth; HttpOnly; SameSite=Strict; Max-Age=0/);
    expect((await refresh({ cookie: `svc_refresh=${cookie}`, origin: service.url })).status).toBe(401);
  });
});

describe('GET /media', () => {
  it('lists the committed uploads of the caller\'s scope, newest first, in keyset pages', async () => {
    const upload = async (token: string, name: string) => {
      const form = new FormData();
      form.append('file', new Blob([`bytes of ${name}`], { type: 'text/plain' }), name);
      const response = await fetch(`${service.url}/media`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
      expect(response.status).toBe(201);
      return (await response.json() as { id: string }).id;
    };
    const t1 = await service.token({ role: 'Sales', userId: 'media-t1', tenantId: 'm1' });
    const t2 = await service.token({ role: 'Sales', userId: 'media-t2', tenantId: 'm2' });
    const a = await upload(t1, 'a.txt');
    const b = await upload(t1, 'b.txt');
    await upload(t2, 'other.txt');
    const list = async (token: string, query = '') => (await fetch(`${service.url}/media${query}`, { headers: { authorization: `Bearer ${token}` } }));
    const first = await (await list(t1, '?limit=1')).json() as { items: unknown[]; nextCursor: string };
    expect(first.items).toEqual([expect.objectContaining({ id: b, filename: 'b.txt', contentType: 'text/plain', url: `/media/${b}` })]);
    const second = await (await list(t1, `?limit=1&after=${first.nextCursor}`)).json();
    expect(second).toEqual({ items: [expect.objectContaining({ id: a })], nextCursor: null });
    expect((await list(t1, '?limit=0')).status).toBe(400);
    expect((await fetch(`${service.url}/media`)).status).toBe(401);
  });
});

describe('GET /meta/migrations', () => {
  it('lists applied migrations with their time, and pending and unknown ones, to an Admin only', async () => {
    const admin = await service.token({ role: 'Admin', userId: 'migrations-admin' });
    const reply = await fetch(`${service.url}/meta/migrations`, { headers: { authorization: `Bearer ${admin}` } });
    expect(reply.status).toBe(200);
    const body = await reply.json() as { applied: Array<{ scope: string; name: string; appliedAt: string }>; pending: string[]; unknown: string[] };
    expect(body.pending).toEqual([]);
    expect(body.unknown).toEqual([]);
    expect(body.applied).toContainEqual({ scope: 'runtime:jobs', name: '0001_jobs.sql', appliedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) });
    const manager = await service.token({ role: 'Manager', userId: 'migrations-manager' });
    expect((await fetch(`${service.url}/meta/migrations`, { headers: { authorization: `Bearer ${manager}` } })).status).toBe(403);
    expect((await fetch(`${service.url}/meta/migrations`)).status).toBe(401);
  });
});
