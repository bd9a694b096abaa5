/**
 * The admin plane's read side: queue statistics (one statement, so one
 * snapshot and the database's clock) and the recent-jobs list.
 */
import type { Db } from '../db/index.ts';
import { badRequest } from '../http/errors.ts';
import { clampInt } from './input.ts';
import { JOB_STATUSES, type JobStatus } from './types.ts';
import type { TenantScope } from '../tenancy/index.ts';
import { isoUtcSql } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import { countsWhere } from './counts.ts';

export interface JobStats {
  readonly byStatus: Record<JobStatus, number>;
  readonly byQueue: Array<{ queue: string; status: JobStatus; count: number }>;
  /** Age of the oldest job still queued (since it was enqueued), 0 when none. */
  readonly oldestQueuedSeconds: number;
}

/**
 * Counts from the maintained counters (counts.ts), never from the jobs
 * themselves; the oldest queued job through svc_jobs_queued_since (the
 * scope's queued jobs by age: its first entry). One statement: one snapshot,
 * the database's clock.
 */
const STATS = (scope: TenantScope) => sql`
  with grouped as (${countsWhere(scope.localPredicate(null))})
  select
    coalesce((select json_agg(json_build_object('queue', queue, 'status', status, 'count', count)
                              order by queue, status) from grouped), '[]'::json) as by_queue,
    coalesce((select extract(epoch from now() - min(created_at)) from svc_jobs
               where ${scope.localPredicate(null)} and status = 'queued'), 0)::float8 as oldest`;

export async function jobStats(db: Db, scope: TenantScope): Promise<JobStats> {
  const row = await db.one<{ by_queue: JobStats['byQueue']; oldest: number }>(compile(STATS(scope), { scope }));
  const byStatus = Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<JobStatus, number>;
  for (const entry of row.by_queue) byStatus[entry.status] += entry.count;
  return { byStatus, byQueue: row.by_queue, oldestQueuedSeconds: Math.max(0, row.oldest) };
}

export interface RecentQuery {
  readonly queue?: string;
  readonly status?: string;
  readonly limit?: string;
  readonly offset?: string;
}

function queryInt(value: string | undefined, field: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^-?\d+$/.test(value)) throw badRequest(`${field} must be an integer`);
  return Number(value);
}

const CREATED_AT = sql.raw(isoUtcSql('created_at'));
const UPDATED_AT = sql.raw(isoUtcSql('updated_at'));

/** Newest first (ULID order); payload and result are left out. */
export async function recentJobs(db: Db, scope: TenantScope, query: RecentQuery) {
  const status = query.status || null;
  if (status !== null && !JOB_STATUSES.includes(status as JobStatus)) {
    throw badRequest(`status must be one of ${JOB_STATUSES.join(', ')}`);
  }
  const limit = clampInt(queryInt(query.limit, 'limit'), 'limit', 50, 1, 200);
  const offset = clampInt(queryInt(query.offset, 'offset'), 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const queue = query.queue || null;
  const rows = await db.manyOrNone(compile(sql`
    select id, queue, kind, status, attempts, max_attempts, error,
           ${CREATED_AT} as created_at, ${UPDATED_AT} as updated_at from svc_jobs
     where ${scope.localPredicate(null)}${queue === null ? sql.empty : sql` and queue = ${sql.value(queue, 'text')}`}${
       status === null ? sql.empty : sql` and status = ${sql.value(status, 'text')}`}
     order by id desc limit ${sql.value(limit, 'int')} offset ${sql.value(offset, 'bigint')}`, { scope }));
  return rows.map((row) => ({
    id: row.id, queue: row.queue, kind: row.kind, status: row.status, attempts: row.attempts,
    maxAttempts: row.max_attempts, error: row.error, createdAt: row.created_at, updatedAt: row.updated_at,
  }));
}
