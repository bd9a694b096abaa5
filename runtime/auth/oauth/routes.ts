/**
 * OAuth2 / OIDC sign-in for the providers configured from OAUTH_<PROVIDER>_*:
 * GET /auth/oauth/providers, /auth/oauth/authorize?provider=,
 * /auth/oauth/callback/{provider}?code=&state=.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import type { OAuthProviderConfig } from '../../config/index.ts';
import type { Db } from '../../db/index.ts';
import { badRequest, forbidden, notFound } from '../../http/errors.ts';
import type { Logger } from '../../log/index.ts';
import type { Accounts } from '../service.ts';
import { authorizationUrl, exchangeCode, fetchIdentity } from './client.ts';
import { userOfIdentity } from './identities.ts';
import { BINDING_COOKIE, STATE_TTL_SECS, codeChallenge, randomToken, saveState, takeState } from './state.ts';
import { setRefreshCookie } from '../cookie.ts';

/**
 * A sign-in started from the console (`authorize?...&return=console`) ends
 * back in the console: the callback sets the refresh cookie of a browser
 * session (../cookie.ts) and redirects to /console instead of answering JSON.
 */
const RETURN_COOKIE = 'svc_oauth_return';

export interface OAuthRouteOptions {
  readonly providers: readonly OAuthProviderConfig[];
  readonly db: Db;
  readonly accounts: Accounts;
  readonly log: Logger;
  readonly audit: import('../../audit/index.ts').AuditLog;
  /** The refresh cookie's lifetime (SVC_REFRESH_TOKEN_TTL_SECS). */
  readonly refreshTokenTtlSecs: number;
}

const STATE_ERRORS = { unknown: 'invalid or already used OAuth state', expired: 'OAuth state expired',
  provider: 'OAuth state belongs to another provider', browser: 'OAuth state was issued to another browser' };

export function mountOAuthRoutes(router: Router, options: OAuthRouteOptions): void {
  const { providers, db } = options;
  const find = (name: unknown) => {
    if (typeof name !== 'string' || name === '') throw badRequest('provider is required', { field: 'provider' });
    const provider = providers.find((p) => p.name === name);
    if (!provider) throw notFound('unknown OAuth provider');
    return provider;
  };
  router.get('/auth/oauth/providers', (ctx) => {
    ctx.body = { providers: providers.map((p) => ({ name: p.name, authorizeUrl: `/auth/oauth/authorize?provider=${p.name}` })) };
  });
  router.get('/auth/oauth/authorize', async (ctx) => {
    const provider = find(ctx.query.provider);
    const browserBinding = bindingOf(ctx) ?? randomToken();
    const codeVerifier = randomToken();
    const nonce = randomToken(16);
    // ctx.origin is the Origin request header in this Koa version (null on a navigation): build it from protocol and host.
    const redirectUri = provider.redirectUri ?? `${ctx.protocol}://${ctx.host}/auth/oauth/callback/${provider.name}`;
    const state = await saveState(db, { provider: provider.name, browserBinding, codeVerifier, nonce, redirectUri });
    ctx.cookies.set(BINDING_COOKIE, browserBinding, {
      httpOnly: true, sameSite: 'lax', path: '/auth/oauth', maxAge: STATE_TTL_SECS * 1000, secure: ctx.secure, overwrite: true,
    });
    const toConsole = ctx.query.return === 'console';
    ctx.cookies.set(RETURN_COOKIE, toConsole ? 'console' : null, {
      httpOnly: true, sameSite: 'lax', path: '/auth/oauth', maxAge: toConsole ? STATE_TTL_SECS * 1000 : 0, secure: ctx.secure, overwrite: true,
    });
    ctx.redirect(authorizationUrl(provider, { state, nonce, codeChallenge: codeChallenge(codeVerifier), redirectUri }));
  });
  router.get('/auth/oauth/callback/:provider', async (ctx) => {
    const provider = find(ctx.params.provider);
    const { code, state, error } = ctx.query;
    if (typeof state !== 'string' || state === '') throw badRequest('state is required', { field: 'state' });
    const taken = await takeState(db, state, provider.name, bindingOf(ctx));
    if (typeof error === 'string') throw badRequest('oauth provider returned an error', { providerError: error });
    if (!taken.ok) throw badRequest(STATE_ERRORS[taken.reason]);
    if (typeof code !== 'string' || code === '') throw badRequest('code is required', { field: 'code' });
    const accessToken = await exchangeCode(provider, code, taken.codeVerifier, taken.redirectUri);
    const identity = await fetchIdentity(provider, accessToken);
    const user = await userOfIdentity(db, provider.name, identity);
    if (user.disabled) throw forbidden('account disabled');
    options.log.info({ provider: provider.name, userId: user.id }, 'oauth sign-in');
    const pair = await options.accounts.issue(user, false, 'auth.login', options.audit.requestOf(ctx));
    if (ctx.cookies.get(RETURN_COOKIE) === 'console') {
      ctx.cookies.set(RETURN_COOKIE, null, { path: '/auth/oauth', overwrite: true });
      setRefreshCookie(ctx, pair.refresh_token, options.refreshTokenTtlSecs);
      ctx.redirect('/console');
      return;
    }
    ctx.body = { access_token: pair.token, refresh_token: pair.refresh_token, token_type: 'Bearer', user: pair.user };
  });
}

function bindingOf(ctx: Koa.Context): string | null {
  const value = ctx.cookies.get(BINDING_COOKIE);
  return value && /^[\w-]{20,100}$/.test(value) ? value : null;
}
