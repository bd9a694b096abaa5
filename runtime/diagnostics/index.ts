/**
 * GET /storage/diagnostics (Admin only, read-only; there is no route that
 * deletes data or resets history): read-cache metrics, per-model history
 * coverage, projection lag, the change feed's reader (position, lag), audit usage.
 */
import { defineCapability } from '../core/index.ts';
import { requireRole } from '../auth/index.ts';
import { auditUsage } from '../audit/index.ts';
import { historyReport, projectionReport, type ReadCacheMetrics } from './report.ts';

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
      koa.set('Cache-Control', 'no-store');
      koa.body = {
        cache: ctx.services.readCache?.metrics() ?? { enabled: false },
        history: await historyReport(ctx.db, ctx.services.events.policy, models),
        projections: await projectionReport(ctx.db, ctx.services.projections),
        feed: ctx.services.feed.stats(),
        audit: await auditUsage(ctx.db, ctx.services.audit),
      };
    });
  },
});
