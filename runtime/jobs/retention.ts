/**
 * Job retention (ADR 022): succeeded jobs are deleted SVC_JOB_RETAIN_SUCCEEDED_HOURS
 * after they finished, dead ones SVC_JOB_RETAIN_DEAD_DAYS after they died
 * (`updated_at`, the time of that last transition). Queued and leased jobs are
 * never touched. As the audit retention does: small batches, each its own
 * short transaction holding a transaction-scoped try-lock, so one instance
 * sweeps at a time and writers never wait on a long delete; each batch walks
 * svc_jobs_finished (status, updated_at), so it reads only the rows it deletes,
 * and deletes them by primary key (`id = any(array(...))`: never a join that
 * the planner could turn into a scan of the table).
 *
 * What a deletion ends: `GET /jobs/{id}` answers 404, an `idempotencyKey` may
 * be used again, and a workflow step still waiting for the job reads it as gone.
 * The job's events stay in the event log: runtime streams are kept whatever
 * SVC_HISTORY_POLICY says (docs/operations.md, retention).
 */
import type { Db } from '../db/index.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import { periodic, type Periodic } from '../core/periodic.ts';
import type { Logger } from '../log/index.ts';
import { compile, sql } from '../sql/index.ts';

export const JOB_RETENTION_BATCH = 1_000;
/** Sweep period: short beside retentions counted in hours and days. */
export const JOB_SWEEP_MS = 300_000;

export type FinishedStatus = 'succeeded' | 'dead';

export interface JobRetention {
  readonly succeededHours: number;
  readonly deadDays: number;
}

/** Jobs deleted per status by one sweep. */
export type Deleted = Record<FinishedStatus, number>;

/** One batch: the oldest `batch` jobs of `status` finished more than `ageSecs` ago (exported for the plan test). */
export const pruneBatch = (status: FinishedStatus, ageSecs: number, batch: number) => compile(sql`
  with gone as (
    delete from svc_jobs where id = any(array(
      select id from svc_jobs
       where status = ${sql.value(status, 'text')}
         and updated_at < now() - make_interval(secs => ${sql.value(ageSecs, 'double precision')})
       order by updated_at limit ${sql.value(batch, 'int')} for update skip locked))
    returning 1)
  select count(*)::int as n from gone`);

/** One status's old jobs, batch after batch; -1 when another instance holds the sweep. */
async function prune(db: Db, status: FinishedStatus, ageSecs: number, batch: number): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await db.tx('svc-job-prune', async (t) => {
      const { locked } = await t.one<{ locked: boolean }>(compile(sql`
        select pg_try_advisory_xact_lock(${sql.value(LOCK_KEYS.jobRetention, 'bigint')}) as locked`));
      if (!locked) return -1;
      return (await t.one<{ n: number }>(pruneBatch(status, ageSecs, batch))).n;
    });
    if (n < 0) return total === 0 ? -1 : total;
    total += n;
    if (n < batch) return total;
  }
}

/** Deletes the jobs past their retention; zeros when another instance is sweeping. */
export async function pruneJobs(db: Db, retention: JobRetention, batch = JOB_RETENTION_BATCH): Promise<Deleted> {
  const succeeded = await prune(db, 'succeeded', retention.succeededHours * 3_600, batch);
  if (succeeded < 0) return { succeeded: 0, dead: 0 };
  const dead = await prune(db, 'dead', retention.deadDays * 86_400, batch);
  return { succeeded, dead: Math.max(0, dead) };
}

/** At start, then every JOB_SWEEP_MS, on one instance per tick (core/periodic.ts). */
export function startJobRetention(db: Db, log: Logger, retention: JobRetention, deleted: (counts: Deleted) => void): Periodic {
  return periodic(db, log, {
    name: 'job-retention', everyMs: JOB_SWEEP_MS, lockKey: LOCK_KEYS.periodicJobRetention,
    async run() {
      const counts = await pruneJobs(db, retention);
      deleted(counts);
      if (counts.succeeded + counts.dead > 0) log.info({ ...counts, ...retention }, 'job retention sweep');
    },
  });
}
