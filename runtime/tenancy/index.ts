/**
 * The one tenant scope (CONTRACT section 8). Every path that touches tenant
 * data (records, jobs, media, audit, subscriptions, realtime, public read)
 * takes its scope from `resolveScope` and renders its predicate with
 * `scope.sql(...)`; no path writes `tenant_id = $n` by hand.
 *
 * A scope is a tenant or the global scope (tenant null). No request spans scopes.
 */
import type Koa from 'koa';
import type { Principal } from '../core/index.ts';
import { forbidden } from '../http/errors.ts';

/** Anything that binds a value and returns its placeholder (records' Params, a CTE builder...). */
export interface Binder {
  add(value: unknown, type?: any): string;
}

/** A Binder over a pg-promise value array: `$n` placeholders in push order. */
export function bindTo(values: unknown[]): Binder {
  return { add: (value, type) => `$${values.push(value)}${type ? `::${type}` : ''}` };
}

export class TenantScope {
  private constructor(
    /** The tenant, or null for the global scope. */
    readonly tenantId: string | null,
  ) {}

  static readonly GLOBAL = new TenantScope(null);

  static of(tenantId: string | null): TenantScope {
    return tenantId === null ? TenantScope.GLOBAL : new TenantScope(tenantId);
  }

  get isGlobal(): boolean {
    return this.tenantId === null;
  }

  /** The predicate "this row lies in the scope", for `column` (default `t."tenant_id"`). */
  sql(p: Binder, column = 't."tenant_id"'): string {
    return this.tenantId === null ? `${column} is null` : `${column} = ${p.add(this.tenantId, 'text')}`;
  }

  /** True when a row stamped with `tenantId` lies in the scope (for in-memory filtering: feeds, channels). */
  contains(tenantId: string | null | undefined): boolean {
    return (tenantId ?? null) === this.tenantId;
  }
}

/**
 * The scope a request acts in (CONTRACT section 8):
 * - a tenant-bound user acts in its tenant; naming another is 403;
 * - a tenant-less Admin (the platform operator) acts in the tenant it names, else the global scope;
 * - any other tenant-less user acts in the global scope; naming a tenant is 403.
 */
export function resolveScope(principal: Pick<Principal, 'role' | 'tenantId'>, requested: string | null | undefined): TenantScope {
  const named = requested?.trim() || null;
  if (principal.tenantId !== null) {
    if (named !== null && named !== principal.tenantId) throw forbidden('tenant not allowed');
    return TenantScope.of(principal.tenantId);
  }
  if (named === null) return TenantScope.GLOBAL;
  if (principal.role !== 'Admin') throw forbidden('tenant not allowed');
  return TenantScope.of(named);
}

/** The scope of an HTTP request: its principal and its `X-Tenant-ID` header. */
export function requestScope(koa: Koa.Context, principal: Pick<Principal, 'role' | 'tenantId'>): TenantScope {
  return resolveScope(principal, koa.get('x-tenant-id'));
}
