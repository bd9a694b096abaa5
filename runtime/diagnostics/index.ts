/**
 * GET /storage/diagnostics (Admin only, read-only; there is no route that
 * deletes data or resets history): read-cache metrics, per-model history
 * coverage, projections (state, rows, refresh lag), the change feed's reader
 * and the durable consumers' cursors with what lies beyond them (in the
 * feed's mode: per tenant, summed, in tenant mode), audit usage. From estimates and bounded
 * reads (report.ts, ADR 021): its cost does not grow with the tables.
 *
 * Query parameters: `exactUpTo` (1..100000) counts rows exactly up to that
 * bound; `verify` (1..10000) compares the newest records of each projection
 * with its base table. Anything else in them is 400 VALIDATION_ERROR.
 */
import type Koa from 'koa';
import { defineCapability } from '../core/index.ts';
import { requireRole } from '../auth/index.ts';
import { invalidField } from '../http/errors.ts';
import {
  auditReport, consumerLags, consumersReport, historyReport, MAX_EXACT, MAX_VERIFY, projectionReport,
  type ReadCacheMetrics, type ReportOptions,
} from './report.ts';

export type { ReadCacheMetrics } from './report.ts';

declare module '../core/capability.ts' {
  interface Services {
    /** Set by a records layer that caches reads; absent means no cache. */
    readCache?: ReadCacheMetrics;
  }
}

export const diagnostics = defineCapability({
  name: 'diagnostics',
  provides: [],
  requires: ['auth', 'events', 'projections', 'feed', 'audit'],
  // No capability provides a read cache today; the report says so.
  optional: ['readCache'],
  async init(ctx) {
    const models = ctx.ir.models.map((m) => m.name);
    ctx.router.get('/storage/diagnostics', requireRole(ctx.services.auth, ['Admin']), async (koa) => {
      const options = optionsOf(koa);
      koa.set('Cache-Control', 'no-store');
      const { feed } = ctx.services;
      const lags = await consumerLags(ctx.db, feed);
      const backlog = await feed.backlog();
      koa.body = {
        cache: ctx.services.readCache?.metrics() ?? { enabled: false },
        history: await historyReport(ctx.db, ctx.services.events.policy, models, options),
        projections: await projectionReport(ctx.db, ctx.services.projections, lags, options),
        feed: {
          ...feed.stats(),
          // What the reader has not read yet, in the mode's positions (tenant mode: summed over tenants).
          behind: backlog.behind, behindIsEstimate: backlog.behindIsEstimate, tenantsBehind: backlog.tenantsBehind,
          consumers: consumersReport(lags),
        },
        audit: await auditReport(ctx.db, ctx.services.audit.policy, options),
      };
    });
  },
});

function optionsOf(koa: Koa.Context): ReportOptions {
  return { exactUpTo: bounded(koa, 'exactUpTo', MAX_EXACT), verify: bounded(koa, 'verify', MAX_VERIFY) };
}

/** An optional whole number from 1 to `max`; repeated, fractional, out of range or not a number is a 400 naming it. */
function bounded(koa: Koa.Context, name: string, max: number): number | null {
  const raw = koa.query[name];
  if (raw === undefined) return null;
  const value = typeof raw === 'string' && /^\d{1,7}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 1 && value <= max)) throw invalidField(name, `${name} must be a whole number from 1 to ${max}`);
  return value;
}
