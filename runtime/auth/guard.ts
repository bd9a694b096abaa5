/**
 * Role checks shared by every plane: "a user JWT", "one of these roles".
 * 401 when the bearer token is missing or invalid, 403 when it is valid but
 * the role is not allowed.
 */
import type Koa from 'koa';
import type { Role } from '../ir/types.ts';
import { forbidden, unauthorized } from '../http/errors.ts';
import type { Principal } from './tokens.ts';

export interface Authenticator {
  /** Verifies signature, expiry and that the session is still live; throws InvalidTokenError. */
  authenticate(token: string): Promise<Principal>;
}

declare module 'koa' {
  interface DefaultState {
    principal?: Principal;
  }
}

export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match ? match[1] : null;
}

/** Resolves the caller from `Authorization: Bearer`, or throws 401. */
export async function principalOf(ctx: Koa.Context, auth: Authenticator): Promise<Principal> {
  if (ctx.state.principal) return ctx.state.principal;
  const token = bearerToken(ctx.get('authorization'));
  if (!token) throw unauthorized();
  try {
    ctx.state.principal = await auth.authenticate(token);
  } catch {
    throw unauthorized('invalid or expired token');
  }
  return ctx.state.principal;
}

export function requireUser(auth: Authenticator): Koa.Middleware {
  return async function requireUser(ctx, next) {
    await principalOf(ctx, auth);
    await next();
  };
}

export function requireRole(auth: Authenticator, roles: readonly Role[]): Koa.Middleware {
  return async function requireRole(ctx, next) {
    const principal = await principalOf(ctx, auth);
    if (!roles.includes(principal.role)) throw forbidden();
    await next();
  };
}

/** "Admin role" (worker tokens, stats, projections, diagnostics, the user API). */
export const requireAdmin = (auth: Authenticator) => requireRole(auth, ['Admin']);

/** "Admin or Manager" (audit). */
export const requireAdminOrManager = (auth: Authenticator) => requireRole(auth, ['Admin', 'Manager']);

/**
 * The tenant a request acts in. A tenant-bound user always acts in its own
 * tenant and may not name another; a user without a tenant may pick one with
 * X-Tenant-ID, else acts in the global scope (rows whose tenant_id is null).
 */
export function resolveTenant(principal: Principal, header: string | undefined | null): string | null {
  const requested = header?.trim() || null;
  if (principal.tenantId !== null) {
    if (requested !== null && requested !== principal.tenantId) throw forbidden('tenant not allowed');
    return principal.tenantId;
  }
  return requested;
}
