/**
 * Job counts per scope, queue and status without counting jobs (ADR 022):
 * the statement triggers of migration 0004 append each write's net change to
 * svc_job_count_deltas; `foldCounts` moves them into svc_job_counts, once per
 * tick across all instances (core/periodic.ts), so the deltas stay a few
 * seconds' worth of writes. A count is the counters plus the deltas, summed in
 * one statement: one snapshot, exact, whatever the number of jobs.
 */
import { untimed, type Db } from '../db/index.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import { periodic, type Periodic } from '../core/periodic.ts';
import type { Logger } from '../log/index.ts';
import { compile, sql, type Sql } from '../sql/index.ts';

/** How often the deltas are folded: what a read sums beyond the counters is this much of the write traffic. */
export const FOLD_MS = 5_000;

/**
 * Moves every delta visible now into the counters and drops counters that
 * reached zero. Deltas appended meanwhile stay for the next fold; the
 * transaction-scoped lock keeps two folds (a slow tick and the next) apart.
 */
const LOCK = compile(sql`select pg_advisory_xact_lock(${sql.value(LOCK_KEYS.jobCountsFold, 'bigint')})`);
const FOLD = compile(sql`
  with moved as (delete from svc_job_count_deltas returning tenant_id, queue, status, n),
  summed as (select tenant_id, queue, status, sum(n) as n from moved group by 1, 2, 3)
  insert into svc_job_counts as c (tenant_id, queue, status, n)
  select tenant_id, queue, status, n from summed
  on conflict (tenant_id, queue, status) do update set n = c.n + excluded.n`);
const DROP_ZEROS = compile(sql`delete from svc_job_counts where n = 0`);

export async function foldCounts(db: Db): Promise<void> {
  await db.tx('svc-job-counts-fold', async (t) => {
    // Deltas are a few seconds of writes, except after writes with no instance running
    // (a bulk load): then the first fold takes what it takes, blocking only the next fold.
    await untimed(t);
    for (const statement of [LOCK, FOLD, DROP_ZEROS]) await t.any(statement);
  });
}

export function startFold(db: Db, log: Logger): Periodic {
  return periodic(db, log, {
    name: 'job-counts-fold', everyMs: FOLD_MS, lockKey: LOCK_KEYS.periodicJobCountsFold,
    run: () => foldCounts(db),
  });
}

/** `(queue, status, count)` rows of the jobs whose tenant column satisfies `where` (a scope's predicate, or `true`). */
export const countsWhere = (where: Sql) => sql`
  select queue, status, sum(n)::bigint as count
    from (select queue, status, n from svc_job_counts where ${where}
          union all
          select queue, status, n from svc_job_count_deltas where ${where}) as parts
   group by queue, status having sum(n) > 0`;
