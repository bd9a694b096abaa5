/**
 * Role checks shared by every plane: "a user JWT", "one of these roles".
 * 401 when the bearer token is missing or invalid, 403 when it is valid but
 * the role is not allowed.
 */
import type Koa from 'koa';
import type { Role } from '../ir/types.ts';
import { forbidden, unauthorized, unavailable } from '../http/errors.ts';
import { InvalidTokenError, type Principal } from './tokens.ts';

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

/**
 * Resolves the caller from `Authorization: Bearer`, or throws 401. Only a
 * refused token is a 401: when the session cannot be checked (the database is
 * down) the answer is 503 with Retry-After, so clients keep their users logged in.
 */
export async function principalOf(ctx: Koa.Context, auth: Authenticator): Promise<Principal> {
  if (ctx.state.principal) return ctx.state.principal;
  const token = bearerToken(ctx.get('authorization'));
  if (!token) throw unauthorized();
  ctx.state.principal = await authenticateOr503(auth, token);
  return ctx.state.principal;
}

/** `auth.authenticate`, with a refused token as 401 and any other failure as 503. */
export async function authenticateOr503(auth: Authenticator, token: string): Promise<Principal> {
  try {
    return await auth.authenticate(token);
  } catch (error) {
    if (error instanceof InvalidTokenError) throw unauthorized('invalid or expired token');
    throw unavailable();
  }
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
