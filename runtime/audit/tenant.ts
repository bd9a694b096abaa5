/** The scope a denied or failed attempt is filed under, without throwing. */
import type Koa from 'koa';
import { resolveScope } from '../tenancy/index.ts';

/**
 * The caller's scope when it resolves; when it does not (the 403 was about
 * the tenant itself, or nobody authenticated), the caller's own tenant, else
 * the global scope. A tenant's Managers thus see the denials of its users.
 */
export function tenantOfRequest(koa: Koa.Context): string | null {
  const principal = koa.state.principal;
  if (!principal) return null;
  try {
    return resolveScope(principal, koa.get('x-tenant-id')).tenantId;
  } catch {
    return principal.tenantId;
  }
}
