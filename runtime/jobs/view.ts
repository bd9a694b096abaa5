/** Reads one job as `GET /jobs/{id}` shows it. */
import type { Db } from '../db/index.ts';
import type { JobView } from './types.ts';
import type { AdminScope } from './workers.ts';

export async function getJob(db: Db, id: string, scope: AdminScope): Promise<JobView | null> {
  const row = await db.oneOrNone(
    `select id, queue, kind, status, attempts, max_attempts, result, error from svc_jobs
      where id = $1 and ($2::text is null or tenant_id = $2)`,
    [id, scope ?? null],
  );
  if (!row) return null;
  return {
    id: row.id, queue: row.queue, kind: row.kind, status: row.status, attempts: row.attempts,
    maxAttempts: row.max_attempts, result: row.result, error: row.error,
  };
}

/** Who may watch `job:{id}`: the user that enqueued it, or an Admin of its tenant. */
export async function mayWatchJob(
  db: Db, id: string, userId: string, isAdmin: boolean, tenantId: string | null,
): Promise<boolean> {
  const row = await db.oneOrNone<{ created_by: string | null; tenant_id: string | null }>(
    'select created_by, tenant_id from svc_jobs where id = $1', [id],
  );
  if (!row || row.tenant_id !== tenantId) return false;
  return isAdmin || (row.created_by !== null && row.created_by === userId);
}
