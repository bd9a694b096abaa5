/**
 * Login, /me, refresh rotation and reuse detection, logout, password storage
 * (argon2id, legacy bcrypt rehash), email normalisation, token pinning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { TEST_JWT_SECRET, type TestService } from '../helpers/service.ts';
import { bcryptHash, createAndLogin, get, insertUser, post, startOwnService } from './helpers.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startOwnService();
});
afterAll(async () => {
  await svc?.close();
});

describe('POST /auth/login', () => {
  it('answers 200 {token, refresh_token, user{id,email,role}} with the role in lower case', async () => {
    const body = await createAndLogin(svc, 'ann@example.com', 'secret123', 'Manager');
    expect(Object.keys(body).sort()).toEqual(['refresh_token', 'token', 'user']);
    expect(body.user).toEqual({ id: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/), email: 'ann@example.com', role: 'manager' });
    expect(body.refresh_token.length).toBeGreaterThanOrEqual(43); // 32 random bytes, base64url
    const me = await get(svc.url, '/auth/me', body.token);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: body.user.id, email: 'ann@example.com', role: 'manager', tenant_id: null });
  });

  it('normalises the email (trim, lower case) and refuses an invalid one with 400', async () => {
    await createAndLogin(svc, 'Bob@Example.COM', 'secret123');
    const login = await post(svc.url, '/auth/login', { email: '  BOB@example.com ', password: 'secret123' });
    expect(login.status).toBe(200);
    expect(login.body.user.email).toBe('bob@example.com');
    const bad = await post(svc.url, '/auth/login', { email: 'not-an-email', password: 'secret123' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/email/);
  });

  it('answers 401 for a wrong password or an unknown email, the same way', async () => {
    await createAndLogin(svc, 'cat@example.com', 'secret123');
    const wrong = await post(svc.url, '/auth/login', { email: 'cat@example.com', password: 'secret124' });
    const unknown = await post(svc.url, '/auth/login', { email: 'nobody@example.com', password: 'secret124' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
  });

  it('answers 400 for a missing password or a non-object body', async () => {
    expect((await post(svc.url, '/auth/login', { email: 'cat@example.com' })).status).toBe(400);
    expect((await post(svc.url, '/auth/login', [1, 2])).status).toBe(400);
  });

  it('stores argon2id hashes, never the password', async () => {
    await createAndLogin(svc, 'dan@example.com', 'secret123');
    const row = await svc.ctx.db.one('select password_hash from svc_users where email = $1', ['dan@example.com']);
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect(row.password_hash).not.toContain('secret123');
  });

  it('verifies a legacy bcrypt hash and rehashes it to argon2id on that login', async () => {
    await insertUser(svc, { id: '01LEGACYBCRYPTUSER00000000', email: 'old@example.com', passwordHash: await bcryptHash('legacy123') });
    expect((await post(svc.url, '/auth/login', { email: 'old@example.com', password: 'wrong1234' })).status).toBe(401);
    const row0 = await svc.ctx.db.one('select password_hash from svc_users where email = $1', ['old@example.com']);
    expect(row0.password_hash).toMatch(/^\$2[ab]\$/);
    const login = await post(svc.url, '/auth/login', { email: 'old@example.com', password: 'legacy123' });
    expect(login.status).toBe(200);
    const row = await svc.ctx.db.one('select password_hash from svc_users where email = $1', ['old@example.com']);
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
    expect((await post(svc.url, '/auth/login', { email: 'old@example.com', password: 'legacy123' })).status).toBe(200);
  });
});

describe('POST /auth/refresh', () => {
  it('rotates both tokens; accepts refreshToken and refresh_token', async () => {
    const first = await createAndLogin(svc, 'eve@example.com', 'secret123');
    const second = await post(svc.url, '/auth/refresh', { refreshToken: first.refresh_token });
    expect(second.status).toBe(200);
    expect(Object.keys(second.body).sort()).toEqual(['refresh_token', 'token', 'user']);
    expect(second.body.user).toEqual(first.user);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    const third = await post(svc.url, '/auth/refresh', { refresh_token: second.body.refresh_token });
    expect(third.status).toBe(200);
    expect((await get(svc.url, '/auth/me', third.body.token)).status).toBe(200);
  });

  it('stores refresh tokens only as hashes', async () => {
    const body = await createAndLogin(svc, 'fay@example.com', 'secret123');
    const rows = await svc.ctx.db.manyOrNone('select token_hash from svc_refresh_tokens');
    expect(rows.some((r) => r.token_hash === body.refresh_token)).toBe(false);
    expect(rows.every((r) => /^[0-9a-f]{64}$/.test(r.token_hash))).toBe(true);
  });

  it('revokes the whole session when a refresh token is used twice (reuse detection)', async () => {
    const login = await createAndLogin(svc, 'gus@example.com', 'secret123');
    const rotated = await post(svc.url, '/auth/refresh', { refreshToken: login.refresh_token });
    expect(rotated.status).toBe(200);
    const replay = await post(svc.url, '/auth/refresh', { refreshToken: login.refresh_token });
    expect(replay.status).toBe(401);
    // The legitimate successor and every access token of the session are dead too.
    expect((await post(svc.url, '/auth/refresh', { refreshToken: rotated.body.refresh_token })).status).toBe(401);
    expect((await get(svc.url, '/auth/me', rotated.body.token)).status).toBe(401);
    expect((await get(svc.url, '/auth/me', login.token)).status).toBe(401);
  });

  it('lets exactly one of two concurrent refreshes with one token win, then revokes the session', async () => {
    const login = await createAndLogin(svc, 'hal@example.com', 'secret123');
    const replies = await Promise.all([1, 2, 3].map(() => post(svc.url, '/auth/refresh', { refreshToken: login.refresh_token })));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 401, 401]);
    const winner = replies.find((r) => r.status === 200)!;
    expect((await post(svc.url, '/auth/refresh', { refreshToken: winner.body.refresh_token })).status).toBe(401);
  });

  it('answers 401 for an unknown token and 400 without one', async () => {
    expect((await post(svc.url, '/auth/refresh', { refreshToken: 'x'.repeat(43) })).status).toBe(401);
    expect((await post(svc.url, '/auth/refresh', {})).status).toBe(400);
  });
});

describe('POST /auth/logout', () => {
  it('revokes the session: its access and refresh tokens are refused afterwards; other sessions live on', async () => {
    const a = await createAndLogin(svc, 'ivy@example.com', 'secret123');
    const b = await post(svc.url, '/auth/login', { email: 'ivy@example.com', password: 'secret123' });
    expect((await get(svc.url, '/auth/me', a.token)).status).toBe(200); // warm the session cache
    const out = await post(svc.url, '/auth/logout', undefined, a.token);
    expect(out.status).toBe(204);
    expect((await get(svc.url, '/auth/me', a.token)).status).toBe(401);
    expect((await post(svc.url, '/auth/refresh', { refreshToken: a.refresh_token })).status).toBe(401);
    expect((await post(svc.url, '/auth/logout', undefined, a.token)).status).toBe(401);
    expect((await get(svc.url, '/auth/me', b.body.token)).status).toBe(200);
  });

  it('requires the bearer header (401), as /auth/me does', async () => {
    expect((await post(svc.url, '/auth/logout')).status).toBe(401);
    const me = await get(svc.url, '/auth/me');
    expect(me.status).toBe(401);
    expect(me.body).toEqual({ error: expect.any(String), code: expect.any(String) });
  });
});

describe('access tokens', () => {
  const claims = { role: 'Admin', tid: null, sid: 'x' };

  it('refuses alg none, another key, another algorithm and an expired token with 401', async () => {
    const login = await createAndLogin(svc, 'jon@example.com', 'secret123');
    const [header, payload] = login.token.split('.');
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    expect(JSON.parse(Buffer.from(header, 'base64url').toString()).alg).toBe('HS256');
    const otherKey = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject(login.user.id)
      .setIssuer('svc-gen').setExpirationTime('1h').sign(new TextEncoder().encode('another-secret-of-enough-length!!'));
    const otherAlg = await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).setSubject(login.user.id)
      .setIssuer('svc-gen').setExpirationTime('1h').sign(new TextEncoder().encode(TEST_JWT_SECRET));
    const expired = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject(login.user.id)
      .setIssuer('svc-gen').setExpirationTime(Math.floor(Date.now() / 1000) - 10).sign(new TextEncoder().encode(TEST_JWT_SECRET));
    for (const token of [none, otherKey, otherAlg, expired, 'garbage']) {
      expect((await get(svc.url, '/auth/me', token)).status).toBe(401);
    }
  });

  it('refuses a correctly signed token whose session does not exist', async () => {
    const forged = await new SignJWT({ role: 'Admin', tid: null, sid: '01NOSUCHSESSION00000000000' })
      .setProtectedHeader({ alg: 'HS256' }).setSubject('someone').setIssuer('svc-gen').setExpirationTime('1h')
      .sign(new TextEncoder().encode(TEST_JWT_SECRET));
    expect((await get(svc.url, '/auth/me', forged)).status).toBe(401);
  });

  it('lasts about 24 hours and carries the session id', async () => {
    const login = await createAndLogin(svc, 'kim@example.com', 'secret123');
    const payload = JSON.parse(Buffer.from(login.token.split('.')[1], 'base64url').toString());
    expect(payload.exp - payload.iat).toBe(24 * 3600);
    const session = await svc.ctx.db.one('select user_id from svc_sessions where id = $1', [payload.sid]);
    expect(session.user_id).toBe(login.user.id);
  });
});

it('does not mount /auth/register when self-registration is off (404)', async () => {
  const reply = await post(svc.url, '/auth/register', { email: 'x@example.com', password: 'secret123' });
  expect(reply.status).toBe(404);
  expect(reply.body).toEqual({ error: expect.any(String), code: expect.any(String) });
});
