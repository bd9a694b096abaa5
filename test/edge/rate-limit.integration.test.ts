/** Per-IP rate limit (specification: Limits, Errors 429, Authentication item 14). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call, ownDatabase } from '../auth/helpers.ts';

let database: TestDatabase;
let limited: TestService;
let fast: TestService;
let untrusting: TestService;

beforeAll(async () => {
  database = await ownDatabase();
  [limited, fast, untrusting] = await Promise.all([
    startTestService({ database, env: { RATE_LIMIT_RPS: '5', RATE_LIMIT_WINDOW_SECS: '60', CORS_ORIGINS: '*' } }),
    startTestService({ database, env: { RATE_LIMIT_RPS: '2', RATE_LIMIT_WINDOW_SECS: '1' } }),
    startTestService({ database, env: { RATE_LIMIT_RPS: '3', SVC_TRUST_X_FORWARDED_FOR: 'false' } }),
  ]);
});
afterAll(async () => {
  await Promise.all([limited?.close(), fast?.close(), untrusting?.close()]);
  await database?.drop();
});

const from = (svc: TestService, ip: string, path = '/meta/schema', headers: Record<string, string> = {}) =>
  call(svc.url, 'GET', path, { headers: { 'x-forwarded-for': ip, ...headers } });

describe('rate limit', () => {
  it('answers 429 with Retry-After and {error:"rate_limited", retryAfter} past RATE_LIMIT_RPS per window', async () => {
    for (let i = 0; i < 5; i++) expect((await from(limited, '203.0.113.1')).status).toBe(200);
    const over = await from(limited, '203.0.113.1');
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).toBe('12'); // 60 s / 5 requests: one token every 12 s
    expect(over.body).toEqual({ error: 'rate_limited', code: 'RATE_LIMITED', retryAfter: 12 });
    // Browsers can read it: the CORS headers are kept on the 429.
    const cors = await from(limited, '203.0.113.1', '/meta/schema', { origin: 'https://app.example.com' });
    expect(cors.status).toBe(429);
    expect(cors.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('keys clients by the first hop of X-Forwarded-For', async () => {
    for (let i = 0; i < 5; i++) await from(limited, '198.51.100.7, 10.0.0.1');
    expect((await from(limited, '198.51.100.7, 10.0.0.2')).status).toBe(429); // same client, another proxy
    expect((await from(limited, '198.51.100.8')).status).toBe(200); // another client
  });

  it('never limits /auth/*, /health and /ready', async () => {
    for (let i = 0; i < 5; i++) await from(limited, '192.0.2.50');
    expect((await from(limited, '192.0.2.50')).status).toBe(429);
    for (let i = 0; i < 10; i++) {
      expect((await from(limited, '192.0.2.50', '/health')).status).toBe(200);
      expect((await from(limited, '192.0.2.50', '/ready')).status).toBe(200);
      expect((await from(limited, '192.0.2.50', '/auth/me')).status).toBe(401);
      expect((await from(limited, '192.0.2.50', '/auth/oauth/providers')).status).toBe(200);
    }
  });

  it('refills continuously over the window (a token bucket, not a fixed window)', async () => {
    expect((await from(fast, '203.0.113.20')).status).toBe(200);
    expect((await from(fast, '203.0.113.20')).status).toBe(200);
    expect((await from(fast, '203.0.113.20')).status).toBe(429);
    await new Promise((r) => setTimeout(r, 600)); // 2 per second: one token after 0.5 s
    expect((await from(fast, '203.0.113.20')).status).toBe(200);
    expect((await from(fast, '203.0.113.20')).status).toBe(429);
  });

  it('uses the peer address when SVC_TRUST_X_FORWARDED_FOR=false (a forged header does not help)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await from(untrusting, `203.0.113.${100 + i}`)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
  });
});
