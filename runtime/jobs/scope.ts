/**
 * Tenant scope of app- and admin-plane requests: the one resolver of CONTRACT
 * section 8 (a tenant-bound user sees only its tenant, a tenant-less Admin the
 * tenant it names or the global scope, anyone else the global scope). A
 * statement renders it with `scope.localPredicate(alias)` (svc_jobs keeps a nullable tenant) and is compiled with
 * `{ scope }` (runtime/sql), so one that never rendered it fails.
 */
import type Koa from 'koa';
import type { Principal } from '../auth/index.ts';
import { requestScope, type TenantScope } from '../tenancy/index.ts';

export function readScope(principal: Principal, koa: Koa.Context): TenantScope {
  return requestScope(koa, principal);
}
