/**
 * OAuth sign-in that starts in the console ends in the console: with
 * `return=console` the callback sets the browser session's refresh cookie
 * (HttpOnly, SameSite=Strict, /auth) and redirects to /console, where a
 * refresh by cookie (this service's Origin) gives the access token. Without
 * it the callback answers JSON as before. The console's login page offers
 * the configured providers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { Browser, CLIENT_ID, CLIENT_SECRET, startProvider, type TestProvider } from '../auth/oidc.ts';

let idp: TestProvider;
let service: TestService;
let callback: string;

beforeAll(async () => {
  idp = await startProvider();
  service = await startTestService({ env: {
    OAUTH_OKTA_CLIENT_ID: CLIENT_ID, OAUTH_OKTA_CLIENT_SECRET: CLIENT_SECRET,
    OAUTH_OKTA_AUTH_URL: `${idp.issuer}/auth`, OAUTH_OKTA_TOKEN_URL: `${idp.issuer}/token`, OAUTH_OKTA_USERINFO_URL: `${idp.issuer}/me`,
  } });
  callback = `${service.url}/auth/oauth/callback/okta`;
  idp.configure([callback]);
});
afterAll(async () => {
  await service?.close();
  await idp?.close();
});

describe('OAuth sign-in from the console', () => {
  it('returns to /console with the refresh cookie, which a refresh from this origin turns into a session', async () => {
    const browser = new Browser();
    idp.next = { accountId: 'carol' };
    const at = await browser.followUntil(`${service.url}/auth/oauth/authorize?provider=okta&return=console`, callback);
    const back = await browser.get(at);
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe('/console');
    const refreshCookie = back.headers.getSetCookie().find((line) => line.startsWith('svc_refresh='))!;
    expect(refreshCookie).toMatch(/^svc_refresh=[\w-]+; Path=\/auth; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    const refreshed = await fetch(`${service.url}/auth/refresh`, {
      method: 'POST', body: '{}',
      headers: { 'content-type': 'application/json', origin: service.url, cookie: refreshCookie.split(';')[0] },
    });
    expect(refreshed.status).toBe(200);
    const { token } = await refreshed.json() as { token: string };
    const me = await (await fetch(`${service.url}/auth/me`, { headers: { authorization: `Bearer ${token}` } })).json() as { email: string };
    expect(me.email).toContain('carol');
  });

  it('answers JSON as before without return=console, even after a console sign-in in the same browser', async () => {
    const browser = new Browser();
    idp.next = { accountId: 'carol' };
    await browser.get(`${service.url}/auth/oauth/authorize?provider=okta&return=console`);
    idp.next = { accountId: 'dave' };
    const at = await browser.followUntil(`${service.url}/auth/oauth/authorize?provider=okta`, callback);
    const answer = await browser.get(at);
    expect(answer.status).toBe(200);
    expect(answer.headers.getSetCookie().some((line) => line.startsWith('svc_refresh='))).toBe(false);
    expect(await answer.json()).toMatchObject({ token_type: 'Bearer', refresh_token: expect.any(String) });
  });
});
