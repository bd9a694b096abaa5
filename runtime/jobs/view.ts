/** Reads one job as `GET /jobs/{id}` shows it. */
import type { Db } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import type { JobView } from './types.ts';
import type { ReadScope, TenantScope } from '../tenancy/index.ts';

/** The job `id` in `scope`; `scope` undefined is the system's view (every scope). */
export async function getJob(db: Db, id: string, scope: ReadScope): Promise<JobView | null> {
  const row = await db.oneOrNone(compile(sql`
    select id, queue, kind, status, attempts, max_attempts, result, error from svc_jobs
     where id = ${sql.value(id, 'text')} and ${scope.localPredicate(null)}`, { scope }));
  if (!row) return null;
  return {
    id: row.id, queue: row.queue, kind: row.kind, status: row.status, attempts: row.attempts,
    maxAttempts: row.max_attempts, result: row.result, error: row.error,
  };
}

/** Who may watch `job:{id}`: the user that enqueued it, or an Admin acting in its scope. */
export async function mayWatchJob(
  db: Db, id: string, userId: string, isAdmin: boolean, scope: TenantScope,
): Promise<boolean> {
  const row = await db.oneOrNone<{ created_by: string | null }>(compile(sql`
    select created_by from svc_jobs where id = ${sql.value(id, 'text')} and ${scope.localPredicate(null)}`, { scope }));
  if (!row) return false;
  return isAdmin || (row.created_by !== null && row.created_by === userId);
}
