/**
 * OAuth2 / OIDC sign-in end to end against a real OpenID provider on loopback.
 * The flow starts on instance A and the provider returns the browser to
 * instance B (one database): the state must live in the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { get, post, ownDatabase } from './helpers.ts';
import { Browser, CLIENT_ID, CLIENT_SECRET, startProvider, type TestProvider } from './oidc.ts';

let database: TestDatabase;
let idp: TestProvider;
let a: TestService;
let b: TestService;
let callback: string;

const oauthEnv = (issuer: string) => ({
  OAUTH_OKTA_CLIENT_ID: CLIENT_ID, OAUTH_OKTA_CLIENT_SECRET: CLIENT_SECRET,
  OAUTH_OKTA_AUTH_URL: `${issuer}/auth`, OAUTH_OKTA_TOKEN_URL: `${issuer}/token`, OAUTH_OKTA_USERINFO_URL: `${issuer}/me`,
});

beforeAll(async () => {
  database = await ownDatabase();
  idp = await startProvider();
  b = await startTestService({ database, env: oauthEnv(idp.issuer) });
  callback = `${b.url}/auth/oauth/callback/okta`;
  a = await startTestService({ database, env: { ...oauthEnv(idp.issuer), OAUTH_OKTA_REDIRECT_URI: callback } });
  idp.configure([callback]);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await idp?.close();
  await database?.drop();
});

/** Runs the browser through authorize -> provider -> (not yet) callback; returns the callback URL. */
async function authorize(browser: Browser, accountId: string | { error: string } = 'alice') {
  idp.next = typeof accountId === 'string' ? { accountId } : accountId;
  return browser.followUntil(`${a.url}/auth/oauth/authorize?provider=okta`, callback);
}

async function finish(browser: Browser, url: string) {
  const response = await browser.get(url);
  return { status: response.status, body: (await response.json()) as any };
}

describe('OAuth providers and authorize', () => {
  it('lists the configured providers', async () => {
    const reply = await get(a.url, '/auth/oauth/providers');
    expect(reply.status).toBe(200);
    expect(reply.body.providers).toEqual([{ name: 'okta', authorizeUrl: '/auth/oauth/authorize?provider=okta' }]);
  });

  it('redirects (302) with state, nonce and PKCE S256, and binds the state to the browser with a cookie', async () => {
    const response = await fetch(`${a.url}/auth/oauth/authorize?provider=okta`, { redirect: 'manual' });
    expect(response.status).toBe(302);
    const location = new URL(response.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(`${idp.issuer}/auth`);
    const q = location.searchParams;
    expect(q.get('client_id')).toBe(CLIENT_ID);
    expect(q.get('redirect_uri')).toBe(callback);
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(q.get('state')!.length).toBeGreaterThanOrEqual(32);
    expect(q.get('nonce')!.length).toBeGreaterThanOrEqual(16);
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith('svc_oauth_binding='))!;
    expect(cookie).toMatch(/httponly/i);
    expect(cookie).toMatch(/samesite=lax/i);
    const stored = await a.ctx.db.one('select count(*) as n from svc_oauth_states where state_hash = $1', [q.get('state')]);
    expect(stored.n).toBe(0); // only a hash of the state is stored
  });

  it('answers 404 for an unconfigured provider and 400 without one', async () => {
    expect((await get(a.url, '/auth/oauth/authorize?provider=github')).status).toBe(404);
    expect((await get(a.url, '/auth/oauth/authorize')).status).toBe(400);
    expect((await get(a.url, '/auth/oauth/callback/google?code=x&state=y')).status).toBe(404);
  });
});

describe('OAuth callback', () => {
  it('exchanges the code, creates a viewer and answers {access_token, refresh_token, user}', async () => {
    const browser = new Browser();
    const url = await authorize(browser, 'alice');
    expect(new URL(url).searchParams.get('code')).toBeTruthy();
    const reply = await finish(browser, url);
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      access_token: expect.any(String), refresh_token: expect.any(String),
      user: { id: expect.any(String), email: 'alice@idp.example.com', role: 'viewer' },
    });
    const me = await get(a.url, '/auth/me', reply.body.access_token);
    expect(me.body).toMatchObject({ email: 'alice@idp.example.com', role: 'viewer' });
    const refreshed = await post(b.url, '/auth/refresh', { refreshToken: reply.body.refresh_token });
    expect(refreshed.status).toBe(200);

    // The same account again: found, not duplicated.
    const browser2 = new Browser();
    const second = await finish(browser2, await authorize(browser2, 'alice'));
    expect(second.body.user.id).toBe(reply.body.user.id);
  });

  it('signs an existing user in by email, keeping its role', async () => {
    const admin = await a.token({ role: 'Admin', userId: 'oauth-admin' });
    const created = await post(a.url, '/auth/users', { email: 'bob@idp.example.com', password: 'secret123', role: 'Manager' }, admin);
    const browser = new Browser();
    const reply = await finish(browser, await authorize(browser, 'bob'));
    expect(reply.status).toBe(200);
    expect(reply.body.user).toEqual({ id: created.body.id, email: 'bob@idp.example.com', role: 'manager' });
  });

  it('stores the identity as (provider, subject) -> user: a later email change at the provider signs in the same user', async () => {
    const browser = new Browser();
    const first = await finish(browser, await authorize(browser, 'dora'));
    expect(first.status).toBe(200);
    const link = await a.ctx.db.one('select provider, user_id from svc_oauth_identities where subject = $1', ['dora']);
    expect(link).toEqual({ provider: 'okta', user_id: first.body.user.id });
    idp.claims.set('dora', { email: 'dora.new@idp.example.com' });
    const browser2 = new Browser();
    const again = await finish(browser2, await authorize(browser2, 'dora'));
    expect(again.status).toBe(200);
    expect(again.body.user.id).toBe(first.body.user.id);
  });

  it('never links an unverified email to an existing account (an admin\'s address claimed at the provider)', async () => {
    const admin = await a.token({ role: 'Admin', userId: 'oauth-admin' });
    const root = await post(a.url, '/auth/users', { email: 'root@idp.example.com', password: 'secret123', role: 'Admin' }, admin);
    expect(root.status).toBe(201);
    idp.claims.set('mallory', { email: 'root@idp.example.com', email_verified: false });
    const browser = new Browser();
    const reply = await finish(browser, await authorize(browser, 'mallory'));
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject({ code: 'FORBIDDEN', error: expect.stringMatching(/not.*verified|verified.*not/i) });
    expect(reply.body.access_token).toBeUndefined();
    expect(await a.ctx.db.oneOrNone('select 1 from svc_oauth_identities where subject = $1', ['mallory'])).toBeNull();
    // Unverified but new: an account of its own, never the admin's.
    idp.claims.set('newbie', { email: 'newbie.unverified@idp.example.com', email_verified: false });
    const browser2 = new Browser();
    const fresh = await finish(browser2, await authorize(browser2, 'newbie'));
    expect(fresh.status).toBe(200);
    expect(fresh.body.user).toMatchObject({ email: 'newbie.unverified@idp.example.com', role: 'viewer' });
  });

  it('refuses a replayed state (single use)', async () => {
    const browser = new Browser();
    const url = await authorize(browser, 'carol');
    expect((await finish(browser, url)).status).toBe(200);
    const replay = await finish(browser, url);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toMatch(/state/);
  });

  it('refuses a wrong state, a missing state and an expired one', async () => {
    const browser = new Browser();
    const url = new URL(await authorize(browser, 'dave'));
    const wrong = new URL(url);
    wrong.searchParams.set('state', 'not-the-state-we-issued-0123456789');
    expect((await finish(browser, wrong.toString())).status).toBe(400);
    const missing = new URL(url);
    missing.searchParams.delete('state');
    expect((await finish(browser, missing.toString())).status).toBe(400);
    await a.ctx.db.none(`update svc_oauth_states set expires_at = now() - interval '1 second'`);
    const expired = await finish(browser, url.toString());
    expect(expired.status).toBe(400);
    expect(expired.body.error).toMatch(/expired/);
  });

  it('refuses a state presented by another browser (no binding cookie)', async () => {
    const victim = new Browser();
    const url = await authorize(victim, 'erin');
    const attacker = await finish(new Browser(), url);
    expect(attacker.status).toBe(400);
    expect(attacker.body.error).toMatch(/browser/);
    // The state is spent even so: the victim's own use fails too (no second chance to race).
    expect((await finish(victim, url)).status).toBe(400);
  });

  it('reports a provider error (access_denied) with 400 and spends the state', async () => {
    const browser = new Browser();
    const url = new URL(await authorize(browser, { error: 'access_denied' }));
    expect(url.searchParams.get('error')).toBe('access_denied');
    const reply = await finish(browser, url.toString());
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: expect.any(String), providerError: 'access_denied' });
    const left = await a.ctx.db.one('select count(*) as n from svc_oauth_states');
    expect(left.n).toBe(0);
  });

  it('refuses a code the provider rejects (400) without creating a session', async () => {
    const browser = new Browser();
    const url = new URL(await authorize(browser, 'frank'));
    url.searchParams.set('code', 'forged-code');
    const reply = await finish(browser, url.toString());
    expect(reply.status).toBe(400);
    expect(reply.body.providerError).toBe('invalid_grant');
  });
});
