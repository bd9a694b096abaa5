/** CORS per CORS_ORIGINS: omitted = same-origin only (no headers), `*`, or an exact list. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { ownDatabase } from '../auth/helpers.ts';

let database: TestDatabase;
let none: TestService;
let any: TestService;
let list: TestService;

beforeAll(async () => {
  database = await ownDatabase();
  [none, any, list] = await Promise.all([
    startTestService({ database }),
    startTestService({ database, env: { CORS_ORIGINS: '*' } }),
    startTestService({ database, env: { CORS_ORIGINS: 'https://app.example.com, https://admin.example.com' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([none?.close(), any?.close(), list?.close()]);
  await database?.drop();
});

const withOrigin = (svc: TestService, origin: string, init: RequestInit = {}) =>
  fetch(`${svc.url}/health`, { ...init, headers: { origin, ...(init.headers as Record<string, string>) } });

const preflight = (svc: TestService, origin: string) => withOrigin(svc, origin, {
  method: 'OPTIONS',
  headers: { 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
});

describe('CORS', () => {
  it('sends no CORS headers when CORS_ORIGINS is omitted (same-origin only)', async () => {
    const response = await withOrigin(none, 'https://evil.example.com');
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await preflight(none, 'https://evil.example.com');
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    expect(pre.headers.get('access-control-allow-methods')).toBeNull();
  });

  it('allows any origin with *', async () => {
    const response = await withOrigin(any, 'https://whoever.example.com');
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const pre = await preflight(any, 'https://whoever.example.com');
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/authorization/i);
  });

  it('allows exactly the listed origins, and nothing else', async () => {
    const allowed = await withOrigin(list, 'https://admin.example.com');
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://admin.example.com');
    expect(allowed.headers.get('vary')).toMatch(/origin/i);
    expect(allowed.headers.get('access-control-allow-credentials')).toBeNull();
    for (const origin of ['https://evil.example.com', 'https://app.example.com.evil.com', 'http://app.example.com']) {
      const denied = await withOrigin(list, origin);
      expect(denied.headers.get('access-control-allow-origin')).toBeNull();
    }
    const pre = await preflight(list, 'https://app.example.com');
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect((await preflight(list, 'https://evil.example.com')).headers.get('access-control-allow-origin')).toBeNull();
  });
});
