/**
 * SVC_AUDIT_RETAIN_DAYS: deletes entries older than the retention in small
 * batches, each its own short transaction, so that writers (which only
 * insert) are never waited on and never wait. One instance sweeps at a time:
 * each batch takes a transaction-scoped advisory lock with `try`, and an
 * instance that does not get it leaves the sweep to the one that has it.
 *
 * The statistics' rollups stay consistent (rollup.ts): each batch first moves
 * the rollups' retention horizon to its cutoff, in its own transaction, so a
 * statistics read that sees an entry gone also sees that its day's rollup
 * may count it, and counts that day from the log instead. When the entries
 * are gone, the rollups of the days wholly before the horizon are deleted.
 */
import type { Db } from '../db/index.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import { compile, sql } from '../sql/index.ts';
import { LOCK_STATE, NEXT_PRUNE_TENANT, PRUNE_START, PRUNE_TENANT_ROLLUPS, RETAIN_BEFORE } from './rollup.ts';

export const AUDIT_RETENTION_LOCK_KEY = LOCK_KEYS.auditRetention;
export const RETENTION_BATCH = 1_000;

/** The sweep's lock: one instance sweeps at a time, batch by batch. */
const LOCK = compile(sql`select pg_try_advisory_xact_lock(${sql.value(AUDIT_RETENTION_LOCK_KEY, 'bigint')}) as locked`);

/** Deletes old entries; returns how many (0 when another instance holds the sweep). */
export async function pruneAudit(db: Db, retainDays: number, batch = RETENTION_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await db.tx('svc-audit-prune', async (t) => {
      if (!(await t.one<{ locked: boolean }>(LOCK)).locked) return -1;
      const horizon = RETAIN_BEFORE(retainDays);
      await t.none(horizon);
      const row = await t.one<{ n: number }>(compile(sql`
        with doomed as (
           select tenant_id, id from svc_audit where occurred_at < now() - make_interval(days => ${sql.value(retainDays, 'int')})
            order by occurred_at limit ${sql.value(batch, 'int')} for update skip locked),
         gone as (delete from svc_audit a using doomed d where a.tenant_id = d.tenant_id and a.id = d.id returning 1)
         select count(*)::int as n from gone`));
      return row.n;
    });
    if (n < 0) return total;
    total += n;
    if (n < batch) break;
  }
  await pruneRollups(db, batch);
  return total;
}

/**
 * Deletes the rollups of days wholly before the retention horizon, tenant by
 * tenant (a tenant's rollups are one shard's on Citus), `batch` rows of each
 * table a transaction, under the sweep's lock. The tenants come from a walk of
 * the (day, tenant) pairs below the horizon (NEXT_PRUNE_TENANT), never from a
 * scan of every tenant.
 */
async function pruneRollups(db: Db, batch: number): Promise<void> {
  let after: { day: string; tenant: string } = PRUNE_START;
  for (;;) {
    const next = await db.tx('svc-audit-prune-rollups', async (t) => {
      if (!(await t.one<{ locked: boolean }>(LOCK)).locked) return null;
      const { day } = await t.one<{ day: string | null }>(LOCK_STATE);
      if (day === null) return null;
      return t.oneOrNone<{ tenant_id: string; day: string }>(NEXT_PRUNE_TENANT(day, after));
    });
    if (next === null) return;
    if (!(await pruneTenantRollups(db, next.tenant_id, batch))) return;
    after = { day: next.day, tenant: next.tenant_id };
  }
}

/** Empties one tenant of its rollups before the horizon; false when another instance took the sweep's lock. */
async function pruneTenantRollups(db: Db, tenant: string, batch: number): Promise<boolean> {
  for (;;) {
    const n = await db.tx('svc-audit-prune-rollups', async (t) => {
      if (!(await t.one<{ locked: boolean }>(LOCK)).locked) return null;
      const { day } = await t.one<{ day: string | null }>(LOCK_STATE);
      if (day === null) return { daily: 0, actors: 0 };
      return t.one<{ daily: number; actors: number }>(PRUNE_TENANT_ROLLUPS(tenant, day, batch));
    });
    if (n === null) return false;
    if (n.daily < batch && n.actors < batch) return true;
  }
}

/** Sweep period: retention is in whole days, so hourly keeps it within 1/24 of the shortest. */
export const AUDIT_SWEEP_MS = 3_600_000;
