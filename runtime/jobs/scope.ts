/**
 * Tenant scope of app- and admin-plane requests: the one resolver of CONTRACT
 * section 8 (a tenant-bound user sees only its tenant, a tenant-less Admin the
 * tenant it names or the global scope, anyone else the global scope), and the
 * SQL predicate it renders into a positional value list.
 */
import type Koa from 'koa';
import type { Principal } from '../auth/index.ts';
import { bindTo, requestScope, type TenantScope } from '../tenancy/index.ts';

export function readScope(principal: Principal, koa: Koa.Context): TenantScope {
  return requestScope(koa, principal);
}

/** `tenant_id` in `scope`, binding its value after those already in `values`. */
export function scopeSql(scope: TenantScope, values: unknown[], column = 'tenant_id'): string {
  return scope.sql(bindTo(values), column);
}
