/** Reads one job as `GET /jobs/{id}` shows it. */
import type { Db } from '../db/index.ts';
import type { JobView } from './types.ts';
import type { TenantScope } from '../tenancy/index.ts';
import { scopeSql } from './scope.ts';

/** The job `id` in `scope`; `scope` undefined is the system's view (every scope). */
export async function getJob(db: Db, id: string, scope: TenantScope | undefined): Promise<JobView | null> {
  const values: unknown[] = [id];
  const row = await db.oneOrNone(
    `select id, queue, kind, status, attempts, max_attempts, result, error from svc_jobs
      where id = $1 and ${scope ? scopeSql(scope, values) : 'true'}`,
    values,
  );
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
  const values: unknown[] = [id];
  const row = await db.oneOrNone<{ created_by: string | null }>(
    `select created_by from svc_jobs where id = $1 and ${scopeSql(scope, values)}`, values,
  );
  if (!row) return false;
  return isAdmin || (row.created_by !== null && row.created_by === userId);
}
