/** REST routes of accounts: /auth/login, /register, /refresh, /logout, /me. */
import type Router from '@koa/router';
import { badRequest, unauthorized } from '../http/errors.ts';
import type { Authenticator } from './guard.ts';
import { principalOf } from './guard.ts';
import { jsonObject } from './policy.ts';
import type { Accounts } from './service.ts';
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
}

export function mountAccountRoutes(router: Router, options: AccountRouteOptions): void {
  const { accounts, auth, db, audit } = options;
  router.post('/auth/login', async (ctx) => {
    ctx.body = await accounts.login(jsonObject(ctx.request.body), clientAddress(ctx, options.trustForwardedFor), audit.requestOf(ctx));
  });
  // Not mounted at all when off: the request falls through to the JSON 404.
  if (options.selfRegistration) {
    router.post('/auth/register', async (ctx) => {
      ctx.body = await accounts.register(jsonObject(ctx.request.body), audit.requestOf(ctx));
    });
  }
  router.post('/auth/refresh', async (ctx) => {
    ctx.body = await accounts.refresh(refreshTokenOf(jsonObject(ctx.request.body)), audit.requestOf(ctx));
  });
  router.post('/auth/logout', async (ctx) => {
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

function refreshTokenOf(body: Record<string, unknown>): string {
  const token = body.refreshToken ?? body.refresh_token;
  if (typeof token !== 'string' || token === '') throw badRequest('refreshToken is required', { field: 'refreshToken' });
  if (token.length > 512) throw unauthorized('invalid refresh token');
  return token;
}
