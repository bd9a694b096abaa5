/** REST routes of accounts: /auth/login, /register, /refresh, /logout, /me. */
import type Koa from 'koa';
import type Router from '@koa/router';
import { badRequest, unauthorized } from '../http/errors.ts';
import type { Authenticator } from './guard.ts';
import { principalOf } from './guard.ts';
import { jsonObject } from './policy.ts';
import type { Accounts, TokenPair } from './service.ts';
import { clearRefreshCookie, refreshTokenFromCookie, setRefreshCookie } from './cookie.ts';
import { findUserById, publicUser } from './users.ts';
import { clientAddress } from '../edge/index.ts';
import type { Db } from '../db/index.ts';
import type { AuditLog } from '../audit/index.ts';

export interface AccountRouteOptions {
  readonly accounts: Accounts;
  readonly auth: Authenticator;
  readonly db: Db;
  readonly selfRegistration: boolean;
  /** SVC_TRUST_X_FORWARDED_FOR: where the client address of the login throttle comes from. */
  readonly trustForwardedFor: boolean;
  readonly audit: AuditLog;
  /** The refresh cookie's lifetime (SVC_REFRESH_TOKEN_TTL_SECS). */
  readonly refreshTokenTtlSecs: number;
}

export function mountAccountRoutes(router: Router, options: AccountRouteOptions): void {
  const { accounts, auth, db, audit } = options;
  router.post('/auth/login', async (ctx) => {
    const body = jsonObject(ctx.request.body);
    if (body.cookie !== undefined && typeof body.cookie !== 'boolean') throw badRequest('cookie must be a boolean', { field: 'cookie' });
    const pair = await accounts.login(body, clientAddress(ctx, options.trustForwardedFor), audit.requestOf(ctx));
    ctx.body = body.cookie === true ? inCookie(ctx, pair, options.refreshTokenTtlSecs) : pair;
  });
  // Not mounted at all when off: the request falls through to the JSON 404.
  if (options.selfRegistration) {
    router.post('/auth/register', async (ctx) => {
      ctx.body = await accounts.register(jsonObject(ctx.request.body), audit.requestOf(ctx));
    });
  }
  router.post('/auth/refresh', async (ctx) => {
    const body = jsonObject(ctx.request.body);
    const fromCookie = body.refreshToken === undefined && body.refresh_token === undefined ? refreshTokenFromCookie(ctx) : null;
    if (fromCookie === null) {
      ctx.body = await accounts.refresh(refreshTokenOf(body), audit.requestOf(ctx));
      return;
    }
    try {
      ctx.body = inCookie(ctx, await accounts.refresh(fromCookie, audit.requestOf(ctx)), options.refreshTokenTtlSecs);
    } catch (error) {
      clearRefreshCookie(ctx);
      throw error;
    }
  });
  router.post('/auth/logout', async (ctx) => {
    clearRefreshCookie(ctx);
    const principal = await principalOf(ctx, auth);
    if (principal.sessionId) await accounts.logout({ ...principal, sessionId: principal.sessionId }, audit.requestOf(ctx));
    ctx.status = 204;
  });
  router.get('/auth/me', async (ctx) => {
    const principal = await principalOf(ctx, auth);
    const user = await findUserById(db, principal.userId);
    if (!user) throw unauthorized('invalid or expired token');
    ctx.body = { ...publicUser(user), firstName: user.first_name, lastName: user.last_name };
  });
}

/** The pair's refresh token moves into the cookie: the body keeps the access token and the user. */
function inCookie(ctx: Koa.Context, pair: TokenPair, ttlSecs: number): Omit<TokenPair, 'refresh_token'> {
  setRefreshCookie(ctx, pair.refresh_token, ttlSecs);
  return { token: pair.token, user: pair.user };
}

function refreshTokenOf(body: Record<string, unknown>): string {
  const token = body.refreshToken ?? body.refresh_token;
  if (typeof token !== 'string' || token === '') throw badRequest('refreshToken is required', { field: 'refreshToken' });
  if (token.length > 512) throw unauthorized('invalid refresh token');
  return token;
}
