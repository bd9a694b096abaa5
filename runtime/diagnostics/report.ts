/**
 * The storage diagnostics report: read-only queries over the event log, the
 * coverage table and the projections. Nothing here writes.
 */
import { isoUtc, type Db } from '../db/index.ts';
import { coverageGaps, type HistoryOptions } from '../events/index.ts';
import { countDrift, type ProjectionService } from '../projections/index.ts';
import { compile, sql } from '../sql/index.ts';

export interface ReadCacheMetrics {
  /** Whatever the read cache reports (hits, misses, entries, ...); `enabled` at least. */
  metrics(): Readonly<Record<string, unknown>> & { readonly enabled: boolean };
}

interface EventCounts {
  stream_type: string;
  events: number;
  first_at: string | null;
  last_at: string | null;
}

const iso = (value: string | null | undefined) => (value ? isoUtc(value) : null);

export async function historyReport(db: Db, policy: HistoryOptions, models: readonly string[]) {
  const counts = await db.manyOrNone<EventCounts>(compile(sql`
    select stream_type, count(*)::int as events, min(occurred_at) as first_at, max(occurred_at) as last_at
       from svc_events where stream_type = any(${sql.value(models, 'text[]')}) group by stream_type`));
  const gaps = await coverageGaps(db);
  return {
    policy: policy.policy,
    retainDays: policy.policy === 'retained' ? policy.retainDays : null,
    models: models.map((model) => {
      const count = counts.find((c) => c.stream_type === model);
      const gap = gaps.find((g) => g.model === model);
      return {
        model,
        policy: policy.policy,
        events: count?.events ?? 0,
        firstEventAt: iso(count?.first_at),
        lastEventAt: iso(count?.last_at),
        complete: policy.policy === 'full' && !gap,
        gaps: gap ? [{ reason: gap.reason, since: iso(gap.since) }] : [],
      };
    }),
  };
}

export async function projectionReport(db: Db, projections: ProjectionService) {
  const state = await db.manyOrNone<{ name: string; last_sync_at: string | null; last_rebuild_at: string | null }>(
    'select name, last_sync_at, last_rebuild_at from svc_projection_state',
  );
  const live = projections.stats();
  const items = [];
  for (const info of projections.list()) {
    const table = projections.tableOf(info.sourceModel);
    const drift = info.kind === 'table' && table ? await countDrift(db, table) : null;
    const saved = state.find((s) => s.name === info.name);
    items.push({
      name: info.name,
      sourceModel: info.sourceModel,
      kind: info.kind,
      rows: drift?.rows ?? null,
      /** Rows that differ from the base table (missing, stale or extra): the refresh lag. */
      lagRows: drift?.drift ?? null,
      lastSyncAt: iso(saved?.last_sync_at),
      lastRebuildAt: iso(saved?.last_rebuild_at),
    });
  }
  return { refresh: live, items };
}
