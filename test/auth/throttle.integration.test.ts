/**
 * The per-account login throttle: /auth/* is outside the per-IP rate limit,
 * so this is what stops password guessing. Policy in runtime/auth/throttle.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { ACCOUNT_FREE_ATTEMPTS, FREE_ATTEMPTS, PRUNE_BATCH, pruneLoginAttempts, RESET_AFTER_SECS } from '../../runtime/auth/throttle.ts';
import { call, createAndLogin, ownDatabase, post, type Reply } from './helpers.ts';

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

const attempt = (svc: TestService, email: string, password: string) => post(svc.url, '/auth/login', { email, password });

describe('login throttle', () => {
  it('stops a brute-force run: only the first attempts are evaluated, even spread over two instances', async () => {
    await createAndLogin(a, 'victim@example.com', 'correct123');
    const guesses = Array.from({ length: 30 }, (_, i) => `guess${i}xyz`);
    const replies: Reply[] = [];
    let lockedAt = 0;
    for (const [i, guess] of guesses.entries()) {
      if (i === FREE_ATTEMPTS - 1) lockedAt = Date.now(); // no later than the server starts the first lock
      replies.push(await attempt(i % 2 ? a : b, 'victim@example.com', guess));
    }
    const lockedFor = (Date.now() - lockedAt) / 1000;
    const statuses = replies.map((r) => r.status);
    expect(statuses.slice(0, FREE_ATTEMPTS)).toEqual(Array(FREE_ATTEMPTS).fill(401));
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    // After the FREE_ATTEMPTS-th guess the locks last 1, 2, 4, ... s, so a guess
    // evaluated k locks later comes at least 2^k - 1 s after it: how many more
    // got in depends on how long the run took, never on the load around it.
    const evaluatedLater = statuses.slice(FREE_ATTEMPTS).filter((s) => s === 401).length;
    expect(evaluatedLater).toBeLessThanOrEqual(Math.floor(Math.log2(lockedFor + 1)));
    // Each refusal carries Retry-After and the rate-limit body.
    const refused = replies.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThan(0);
    for (const reply of refused) {
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(reply.body).toMatchObject({ error: 'rate_limited', retryAfter: expect.any(Number) });
    }
  });

  it('refuses even the right password while the account is locked, and says for how long', async () => {
    await createAndLogin(a, 'locked@example.com', 'correct123');
    // A lock as ten minutes of failures leave it (the account-wide key), so the
    // check does not race a 1 s lock running out.
    await a.ctx.db.none(
      `insert into svc_login_throttle (email, client, attempts, last_attempt_at, locked_until)
       values ($1, '', $2, now(), now() + interval '10 minutes')`,
      ['locked@example.com', ACCOUNT_FREE_ATTEMPTS + 5],
    );
    for (const svc of [a, b]) {
      const locked = await attempt(svc, 'locked@example.com', 'correct123');
      const retryAfter = Number(locked.headers.get('retry-after'));
      expect(locked.status).toBe(429);
      expect(retryAfter).toBeGreaterThan(590);
      expect(retryAfter).toBeLessThanOrEqual(600);
      expect(locked.body).toMatchObject({ error: 'rate_limited', retryAfter });
    }
  });

  it('counts parallel guesses atomically: no burst gets past the limit', async () => {
    await createAndLogin(a, 'burst@example.com', 'correct123');
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => attempt(i % 2 ? a : b, 'burst@example.com', `nope${i}abc`)));
    expect(replies.filter((r) => r.status === 401)).toHaveLength(FREE_ATTEMPTS);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(12 - FREE_ATTEMPTS);
  });

  it('lets the owner in once the lock expires, and a success clears the count', async () => {
    await createAndLogin(a, 'patient@example.com', 'correct123');
    for (let i = 0; i < FREE_ATTEMPTS; i++) expect((await attempt(a, 'patient@example.com', `bad${i}pass`)).status).toBe(401);
    const locked = await attempt(a, 'patient@example.com', 'correct123');
    expect(locked.status).toBe(429);
    await new Promise((r) => setTimeout(r, Number(locked.headers.get('retry-after')) * 1000 + 100));
    expect((await attempt(a, 'patient@example.com', 'correct123')).status).toBe(200);
    expect((await attempt(a, 'patient@example.com', 'bad-again1')).status).toBe(401); // the count started over
    expect((await attempt(a, 'patient@example.com', 'correct123')).status).toBe(200);
  });

  it('a stranger\'s failed guesses lock the stranger out, not the owner from another address', async () => {
    await createAndLogin(a, 'owner@example.com', 'correct123');
    const from = (address: string, password: string) =>
      call(a.url, 'POST', '/auth/login', { body: { email: 'owner@example.com', password }, headers: { 'x-forwarded-for': address } });
    const stranger: number[] = [];
    for (let i = 0; i < FREE_ATTEMPTS + 3; i++) stranger.push((await from('203.0.113.9', `guess${i}xyz`)).status);
    expect(stranger.slice(0, FREE_ATTEMPTS)).toEqual(Array(FREE_ATTEMPTS).fill(401));
    expect(stranger.slice(FREE_ATTEMPTS)).toEqual([429, 429, 429]);
    expect((await from('198.51.100.7', 'correct123')).status).toBe(200);
  });

  it('has a per-account ceiling against guesses spread over many addresses', async () => {
    await createAndLogin(a, 'spread@example.com', 'correct123');
    const statuses: number[] = [];
    for (let i = 0; i <= ACCOUNT_FREE_ATTEMPTS; i++) {
      const reply = await call(a.url, 'POST', '/auth/login', {
        body: { email: 'spread@example.com', password: `guess${i}xyz` }, headers: { 'x-forwarded-for': `10.0.${i >> 8}.${i & 255}` },
      });
      statuses.push(reply.status);
    }
    expect(statuses.slice(0, ACCOUNT_FREE_ATTEMPTS - 1).every((s) => s === 401)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
    const owner = await call(a.url, 'POST', '/auth/login', { body: { email: 'spread@example.com', password: 'correct123' }, headers: { 'x-forwarded-for': '198.51.100.8' } });
    expect(owner.status).toBe(429);
  });

  it('throttles unknown emails the same way (no account enumeration)', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < FREE_ATTEMPTS + 2; i++) statuses.push((await attempt(b, 'ghost@example.com', `x${i}yz12`)).status);
    expect(statuses).toEqual([...Array(FREE_ATTEMPTS).fill(401), 429, 429]);
  });

  it('the periodic sweep forgets idle counts in batches and keeps recent and locked ones', async () => {
    const idle = `now() - interval '${RESET_AFTER_SECS + 60} seconds'`;
    // More idle rows than one batch holds, so the sweep takes several transactions.
    await a.ctx.db.none(`insert into svc_login_throttle (email, client, attempts, last_attempt_at)
      select 'idle' || n || '@example.com', '', 1, ${idle} from generate_series(1, $1::int) n`, [PRUNE_BATCH * 2 + 7]);
    await a.ctx.db.none(`insert into svc_login_throttle (email, client, attempts, last_attempt_at, locked_until) values
      ('recent@sweep.example', '', 1, now(), null), ('still-locked@sweep.example', '', 60, ${idle}, now() + interval '1 minute')`);
    const before = await a.ctx.db.one<{ n: number }>('select count(*)::int as n from svc_login_throttle');
    expect(await pruneLoginAttempts(a.ctx.db)).toBe(PRUNE_BATCH * 2 + 7);
    const left = await a.ctx.db.map(`select email from svc_login_throttle where email like '%sweep.example' or email like 'idle%' order by email`, [], (r) => r.email);
    expect(left).toEqual(['recent@sweep.example', 'still-locked@sweep.example']);
    expect(await a.ctx.db.one('select count(*)::int as n from svc_login_throttle')).toEqual({ n: before.n - (PRUNE_BATCH * 2 + 7) });
  });
});
