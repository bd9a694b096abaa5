/**
 * Live refresh: every instance hears committed model changes
 * (events.onChange) and re-reads the changed rows from the base table into
 * the projection. Best effort and idempotent, so several instances may do the
 * same work; the next start reconciles a change that was missed. Notices are
 * batched per model and applied by one worker at a time.
 *
 * Custom projections get each change once across all instances: a claim on
 * (projection, record, version) in the apply transaction.
 */
import type { Db } from '../db/index.ts';
import type { ChangeNotice } from '../events/index.ts';
import type { Logger } from '../log/index.ts';
import { eventOfNotice } from './event.ts';
import { refreshIds, refreshSql } from './sync.ts';
import type { ProjectionDefinition, RefreshStats, TableProjection } from './types.ts';

const MAX_IDS_PER_STATEMENT = 500;

export class Refresher {
  private readonly ids = new Map<string, Set<string>>();
  private customQueue: ChangeNotice[] = [];
  private running: Promise<void> | null = null;
  private readonly sql = new Map<string, string>();
  private refreshed = 0;
  private failures = 0;
  private lastRefreshAt: string | null = null;

  constructor(
    private readonly db: Db,
    private readonly tables: ReadonlyMap<string, TableProjection>,
    private readonly customs: readonly ProjectionDefinition[],
    private readonly log: Logger,
  ) {
    for (const p of tables.values()) this.sql.set(p.model, refreshSql(p));
  }

  hear(notice: ChangeNotice): void {
    if (this.tables.has(notice.modelName)) {
      let set = this.ids.get(notice.modelName);
      if (!set) this.ids.set(notice.modelName, (set = new Set()));
      set.add(notice.recordId);
    }
    if (this.customs.some((c) => c.sourceModel === notice.modelName)) this.customQueue.push(notice);
    this.running ??= this.drain().finally(() => (this.running = null));
  }

  /** Resolves once everything heard so far is applied. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stats(): RefreshStats {
    let pending = this.customQueue.length;
    for (const set of this.ids.values()) pending += set.size;
    return { refreshed: this.refreshed, failures: this.failures, pending, lastRefreshAt: this.lastRefreshAt };
  }

  private async drain(): Promise<void> {
    // Yield once so that a burst of notices (updateMany) lands in one batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.ids.size > 0 || this.customQueue.length > 0) {
      const batch = [...this.ids];
      this.ids.clear();
      for (const [model, ids] of batch) await this.refreshModel(model, [...ids]);
      const notices = this.customQueue;
      this.customQueue = [];
      for (const notice of notices) await this.applyCustoms(notice);
    }
  }

  private async refreshModel(model: string, ids: string[]): Promise<void> {
    const p = this.tables.get(model)!;
    for (let i = 0; i < ids.length; i += MAX_IDS_PER_STATEMENT) {
      const chunk = ids.slice(i, i + MAX_IDS_PER_STATEMENT);
      try {
        await refreshIds(this.db, p, chunk, this.sql.get(model));
        this.refreshed += chunk.length;
        this.lastRefreshAt = new Date().toISOString();
      } catch (err) {
        this.failures += 1;
        this.log.warn({ err, projection: p.name, ids: chunk.length }, 'projection refresh failed (reconciled at next start)');
      }
    }
  }

  private async applyCustoms(notice: ChangeNotice): Promise<void> {
    for (const custom of this.customs.filter((c) => c.sourceModel === notice.modelName)) {
      try {
        const event = await eventOfNotice(this.db, notice);
        await this.db.tx('svc-projection-apply', async (t) => {
          if (event.version > 0) {
            const claim = await t.oneOrNone(
              `insert into svc_projection_versions as v (projection, record_id, version) values ($1, $2, $3)
               on conflict (projection, record_id) do update set version = excluded.version
               where v.version < excluded.version returning 1 as claimed`,
              [custom.name, event.recordId, event.version],
            );
            if (!claim) return; // another instance applied it
          }
          await custom.apply(event, t);
        });
        this.refreshed += 1;
        this.lastRefreshAt = new Date().toISOString();
      } catch (err) {
        this.failures += 1;
        this.log.warn({ err, projection: custom.name, eventId: notice.eventId }, 'custom projection apply failed');
      }
    }
  }
}
