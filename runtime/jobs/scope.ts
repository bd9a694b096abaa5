/**
 * Tenant scope of app- and admin-plane reads. A tenant-bound user sees only its
 * tenant (naming another is 403, as everywhere); a user without a tenant sees
 * the tenant it names with X-Tenant-ID, or every tenant when it names none.
 */
import type Koa from 'koa';
import { resolveTenant, type Principal } from '../auth/index.ts';
import type { AdminScope } from './workers.ts';

export function readScope(principal: Principal, koa: Koa.Context): AdminScope {
  return resolveTenant(principal, koa.get('x-tenant-id')) ?? undefined;
}

/** Timestamps as ISO 8601 in UTC, computed in SQL so the format does not depend on DateStyle. */
export const isoUtc = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
