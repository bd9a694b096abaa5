/**
 * Denied attempts on protected routes: any 401 or 403 a route answers is
 * written as an `access.denied` entry, in a transaction of its own. Routes
 * that write a more precise entry themselves (login: `auth.login_failed`;
 * refresh: `auth.refresh` / `auth.refresh_reuse`) are left to do so.
 */
import type { ErrorObserver } from '../http/app.ts';
import { HttpError } from '../http/errors.ts';
import { tenantOfRequest } from './tenant.ts';
import { userActor, type AuditLog } from './types.ts';

const WRITE_THEIR_OWN = new Set(['/auth/login', '/auth/refresh']);

export function deniedAttempts(audit: AuditLog): ErrorObserver {
  return async function deniedAttempts(koa, error) {
    if (error instanceof HttpError && (error.status === 401 || error.status === 403) && !WRITE_THEIR_OWN.has(koa.path)) {
      const principal = koa.state.principal;
      await audit.denied({
        action: 'access.denied', tenantId: tenantOfRequest(koa), actor: userActor(principal),
        changes: { method: koa.method, path: koa.path, status: error.status }, request: audit.requestOf(koa),
      });
    }
  };
}
