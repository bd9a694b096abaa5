/**
 * The four audit routes (CONTRACT section 9). Admin and Manager only (401
 * without a token, 403 for other roles), except that any user reads its own
 * activity. Every route acts in the caller's tenant scope (resolveScope).
 * There is no route that edits or deletes entries.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import { principalOf, type Authenticator } from '../auth/guard.ts';
import type { Principal } from '../core/index.ts';
import type { Db } from '../db/index.ts';
import { badRequest, forbidden, notFound } from '../http/errors.ts';
import { resolveScope } from '../tenancy/index.ts';
import { decodeCursor, pageEntries, type AuditFilter, type PageRequest } from './query.ts';
import { rollupStatistics } from './statistics.ts';
import { OUTCOMES } from './types.ts';

export const DEFAULT_LIMIT = 50;
/** /audit/statistics without `from` covers this many days up to `to` (ADR 022). */
export const STATISTICS_DEFAULT_DAYS = 30;
/** The longest range /audit/statistics reads: its cost follows the entries in range, so the range is bounded. */
export const STATISTICS_MAX_DAYS = 92;
const DAY_MS = 86_400_000;
export const MAX_LIMIT = 200;
const READERS: readonly string[] = ['Admin', 'Manager'];

export interface AuditRouteOptions {
  readonly db: Db;
  /** Read per request: the auth capability replaces the signature-only authenticator. */
  readonly auth: () => Authenticator;
  /** Entity types the entity route knows: the schema's models and the runtime's own. */
  readonly entityTypes: ReadonlySet<string>;
}

export function mountAuditRoutes(router: Router, options: AuditRouteOptions): void {
  const { db } = options;
  const reader = async (koa: Koa.Context) => {
    const principal = await principalOf(koa, options.auth());
    if (!READERS.includes(principal.role)) throw forbidden();
    return principal;
  };
  const scopeOf = (koa: Koa.Context, principal: Principal) => resolveScope(principal, koa.get('x-tenant-id'));

  router.get('/audit/logs', async (koa) => {
    const principal = await reader(koa);
    koa.body = await pageEntries(db, scopeOf(koa, principal), filterOf(koa), pageOf(koa));
  });

  router.get('/audit/user/:id/activity', async (koa) => {
    const principal = await principalOf(koa, options.auth());
    if (principal.userId !== koa.params.id && !READERS.includes(principal.role)) throw forbidden();
    const filter = { ...filterOf(koa), actorId: koa.params.id };
    koa.body = await pageEntries(db, scopeOf(koa, principal), filter, pageOf(koa));
  });

  router.get('/audit/entity/:type/:id/audit', async (koa) => {
    const principal = await reader(koa);
    if (!options.entityTypes.has(koa.params.type)) throw notFound(`unknown model ${koa.params.type}`);
    const filter = { ...filterOf(koa), entityType: koa.params.type, entityId: koa.params.id };
    koa.body = await pageEntries(db, scopeOf(koa, principal), filter, pageOf(koa));
  });

  router.get('/audit/statistics', async (koa) => {
    const principal = await reader(koa);
    const range = statisticsRange(timeOf(koa, 'from'), timeOf(koa, 'to'), new Date());
    koa.set('Cache-Control', 'no-store');
    koa.body = await rollupStatistics(db, scopeOf(koa, principal), range);
  });
}

function param(koa: Koa.Context, name: string): string | undefined {
  const raw = koa.query[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value === undefined || value === '' ? undefined : value;
}

function textOf(koa: Koa.Context, name: string): string | undefined {
  const value = param(koa, name);
  if (value !== undefined && value.length > 200) throw badRequest(`${name} is too long`, { field: name });
  return value;
}

function timeOf(koa: Koa.Context, name: string): Date | undefined {
  const value = param(koa, name);
  if (value === undefined) return undefined;
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) throw badRequest(`${name} must be an ISO 8601 timestamp`, { field: name });
  return time;
}

/**
 * The statistics' range: `to` defaults to now, `from` to STATISTICS_DEFAULT_DAYS
 * before `to`; a range longer than STATISTICS_MAX_DAYS, or reversed, is 400.
 */
export function statisticsRange(from: Date | undefined, to: Date | undefined, now: Date): { from: Date; to: Date } {
  const end = to ?? now;
  const start = from ?? new Date(end.getTime() - STATISTICS_DEFAULT_DAYS * DAY_MS);
  if (start > end) throw badRequest('from must not be after to', { field: 'from' });
  if (end.getTime() - start.getTime() > STATISTICS_MAX_DAYS * DAY_MS) {
    throw badRequest(`from and to must lie at most ${STATISTICS_MAX_DAYS} days apart`, { field: from ? 'from' : 'to' });
  }
  return { from: start, to: end };
}

function filterOf(koa: Koa.Context): AuditFilter {
  const outcome = param(koa, 'outcome');
  if (outcome !== undefined && !(OUTCOMES as readonly string[]).includes(outcome)) {
    throw badRequest(`outcome must be one of ${OUTCOMES.join(', ')}`, { field: 'outcome' });
  }
  return {
    entityType: textOf(koa, 'entityType'), entityId: textOf(koa, 'entityId'), actorId: textOf(koa, 'actorId'),
    action: textOf(koa, 'action'), outcome, from: timeOf(koa, 'from'), to: timeOf(koa, 'to'),
  };
}

/** `limit` 1..200, default 50; above 200 is clamped, below 1 (or not a whole number) is 400. */
function pageOf(koa: Koa.Context): PageRequest {
  const rawLimit = param(koa, 'limit');
  let limit = DEFAULT_LIMIT;
  if (rawLimit !== undefined) {
    const value = Number(rawLimit);
    if (!/^-?\d+$/.test(rawLimit) || value < 1) throw badRequest('limit must be a whole number from 1 to 200', { field: 'limit' });
    limit = Math.min(MAX_LIMIT, value);
  }
  const cursor = param(koa, 'cursor');
  if (cursor === undefined) return { limit };
  const before = decodeCursor(cursor);
  if (before === null) throw badRequest('cursor is not valid', { field: 'cursor' });
  return { limit, before };
}
