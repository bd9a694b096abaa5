/**
 * The reclaim sweep: leases whose deadline passed go back to the queue (crash
 * recovery, at-least-once delivery), or to dead when that was the last attempt.
 *
 * One instance sweeps per interval (core/periodic.ts); a direct call beside it
 * is safe too: rows are claimed with FOR UPDATE SKIP LOCKED, so each expired
 * lease is moved by exactly one sweep.
 */
import type { Db } from '../db/index.ts';
import type { EventStore } from '../events/index.ts';
import type { Logger } from '../log/index.ts';
import { periodic } from '../core/periodic.ts';
import { LOCK_KEYS } from '../db/locks.ts';

const BATCH = 1000;

const RECLAIM = `
  with expired as (
    select id from svc_jobs
     where status = 'leased' and visible_at < now()
     order by visible_at
     limit ${BATCH}
     for update skip locked
  )
  update svc_jobs j
     set status = case when j.attempts >= j.max_attempts then 'dead' else 'queued' end,
         error = case when j.attempts >= j.max_attempts then 'lease expired on the last attempt' else j.error end,
         lease_id = null, worker_id = null, visible_at = now(), updated_at = now()
    from expired
   where j.id = expired.id
  returning j.id, j.status, j.attempts, j.tenant_id`;

interface ReclaimedRow {
  id: string;
  status: 'queued' | 'dead';
  attempts: number;
  tenant_id: string | null;
}

async function reclaimBatch(db: Db, events: EventStore): Promise<number> {
  const moved = await db.tx('svc-jobs-reclaim', async (t) => {
    const rows = await t.manyOrNone<ReclaimedRow>(RECLAIM);
    await events.appendMany(t, rows.map((row) => ({
      streamType: 'Job', streamId: row.id,
      eventType: row.status === 'dead' ? 'JobDead' : 'JobReclaimed',
      data: { attempts: row.attempts, reason: 'lease expired' },
      actorId: null, tenantId: row.tenant_id,
    })));
    return rows.length;
  });
  if (moved > 0) events.committed();
  return moved;
}

/** Reclaims every expired lease, a batch per transaction. */
export async function reclaimExpired(db: Db, events: EventStore): Promise<number> {
  let total = 0;
  for (;;) {
    const moved = await reclaimBatch(db, events);
    total += moved;
    if (moved < BATCH) return total;
  }
}

/**
 * Runs the sweep every `intervalSecs` on one instance per interval
 * (core/periodic.ts); the returned function stops it (and waits for a running sweep).
 */
export function startReclaimer(db: Db, events: EventStore, log: Logger, intervalSecs: number): () => Promise<void> {
  const task = periodic(db, log, {
    name: 'jobs-reclaim', everyMs: Math.max(1, Math.round(intervalSecs * 1000)), lockKey: LOCK_KEYS.periodicJobsReclaim,
    async run() {
      const moved = await reclaimExpired(db, events);
      if (moved > 0) log.info({ moved }, 'expired job leases reclaimed');
    },
  });
  return () => task.stop();
}
