/**
 * SVC_AUDIT_RETAIN_DAYS: deletes entries older than the retention in small
 * batches, each its own short transaction, so that writers (which only
 * insert) are never waited on and never wait. One instance sweeps at a time:
 * each batch takes a transaction-scoped advisory lock with `try`, and an
 * instance that does not get it leaves the sweep to the one that has it.
 */
import type { Db } from '../db/index.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import { compile, sql } from '../sql/index.ts';

export const AUDIT_RETENTION_LOCK_KEY = LOCK_KEYS.auditRetention;
export const RETENTION_BATCH = 1_000;

/** Deletes old entries; returns how many (0 when another instance holds the sweep). */
export async function pruneAudit(db: Db, retainDays: number, batch = RETENTION_BATCH): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await db.tx('svc-audit-prune', async (t) => {
      const { locked } = await t.one<{ locked: boolean }>(compile(sql`
        select pg_try_advisory_xact_lock(${sql.value(AUDIT_RETENTION_LOCK_KEY, 'bigint')}) as locked`));
      if (!locked) return -1;
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
    if (n < batch) return total;
  }
}

/** Sweep period: retention is in whole days, so hourly keeps it within 1/24 of the shortest. */
export const AUDIT_SWEEP_MS = 3_600_000;
