/**
 * Session checks across instances: two servers on one database. A logout on
 * A is refused on B at once (LISTEN/NOTIFY), not after B's cache expires.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { SESSIONS_CHANNEL } from '../../runtime/auth/index.ts';
import { createAndLogin, get, ownDatabase, post } from './helpers.ts';

let database: TestDatabase;
let a: TestService;
let b: TestService;

beforeAll(async () => {
  database = await ownDatabase();
  [a, b] = await Promise.all([startTestService({ database }), startTestService({ database })]);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await database?.drop();
});

/** Polls until `check` holds, for at most `ms`; returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - started;
}

describe('sessions across instances', () => {
  it('a logout on instance A is refused on instance B well before B’s cache would expire', async () => {
    const login = await createAndLogin(a, 'multi@example.com', 'secret123');
    expect((await get(b.url, '/auth/me', login.token)).status).toBe(200); // B caches the session as live
    expect((await post(a.url, '/auth/logout', undefined, login.token)).status).toBe(204);
    const took = await within(300, async () => (await get(b.url, '/auth/me', login.token)).status === 401);
    expect(took).toBeLessThan(300); // the cache TTL is 5 s: only the notification explains this
    expect((await post(b.url, '/auth/refresh', { refreshToken: login.refresh_token })).status).toBe(401);
  });

  it('caches live sessions (a silent revocation is seen only after a notification)', async () => {
    const login = await createAndLogin(a, 'cache@example.com', 'secret123');
    expect((await get(b.url, '/auth/me', login.token)).status).toBe(200);
    const sid = JSON.parse(Buffer.from(login.token.split('.')[1], 'base64url').toString()).sid as string;
    await a.ctx.db.none('update svc_sessions set revoked_at = now() where id = $1', [sid]); // no notification
    expect((await get(b.url, '/auth/me', login.token)).status).toBe(200); // still cached
    await a.ctx.notifier.notify(SESSIONS_CHANNEL, `s:${sid}`);
    await within(300, async () => (await get(b.url, '/auth/me', login.token)).status === 401);
  });

  it('disabling a user on A refuses its tokens on B at once', async () => {
    const login = await createAndLogin(a, 'off-b@example.com', 'secret123');
    expect((await get(b.url, '/auth/me', login.token)).status).toBe(200);
    const admin = await a.token({ role: 'Admin', userId: 'sessions-admin' });
    const patched = await fetch(`${a.url}/auth/users/${login.user.id}`, {
      method: 'PATCH', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ disabled: true }),
    });
    expect(patched.status).toBe(200);
    await within(300, async () => (await get(b.url, '/auth/me', login.token)).status === 401);
  });
});
