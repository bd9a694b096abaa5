/**
 * Job retention and the maintained job counters (ADR 022), over real HTTP on
 * two instances sharing one database: old succeeded and dead jobs are deleted
 * by one instance, recent and unfinished ones stay, /metrics shows the
 * deletions, and GET /jobs/stats (read from the counters) equals a real count
 * of the jobs before and after the sweep.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldCounts } from '../../runtime/jobs/counts.ts';
import { pruneJobs } from '../../runtime/jobs/retention.ts';
import { queryOnce, type TestDatabase } from '../helpers/db.ts';
import { captureStatements } from '../helpers/statements.ts';
import { LOCK_KEYS } from '../../runtime/db/locks.ts';
import type { TestService } from '../helpers/service.ts';
import { createJobsDatabase, mintWorker, startJobsService, userClient, waitFor, workerClient } from './helpers.ts';

let database: TestDatabase;
let first: TestService;
let second: TestService;

/** Seeded before either instance starts: `[tenant, status, age, how many]`. */
const SEEDED: Array<[string, string, string, number]> = [
  ['ret-a', 'succeeded', '25 hours', 30], // past SVC_JOB_RETAIN_SUCCEEDED_HOURS (24): deleted
  ['ret-a', 'succeeded', '23 hours', 4], // kept
  ['ret-a', 'dead', '31 days', 6], // past SVC_JOB_RETAIN_DEAD_DAYS (30): deleted
  ['ret-a', 'dead', '29 days', 2], // kept
  ['ret-a', 'queued', '40 days', 3], // never finished: kept whatever its age
  ['ret-a', 'leased', '40 days', 1], // kept
  ['ret-b', 'succeeded', '25 hours', 5], // another tenant's, deleted too
];
const DELETED = { succeeded: 35, dead: 6 };

async function seed(url: string) {
  for (const [index, [tenant, status, age, n]] of SEEDED.entries()) {
    await queryOnce(url, `
      insert into svc_jobs (id, queue, kind, status, tenant_id, created_at, updated_at, visible_at)
      select $1 || '-' || $2 || '-' || i, 'mail', 'send', $3, $4, now() - $5::interval, now() - $5::interval, now() + interval '1 hour'
        from generate_series(1, $6::int) i`, [`seed${index}`, status, status, tenant, age, n]);
  }
}

function deletedIn(metrics: string, status: string): number {
  const match = new RegExp(`^svc_jobs_deleted_total\\{status="${status}"\\} (\\d+)$`, 'm').exec(metrics);
  return match ? Number(match[1]) : 0;
}

const metricsOf = async (service: TestService) => (await fetch(`${service.url}/metrics`)).text();

/** What GET /jobs/stats must say for `tenant`, counted from the jobs themselves. */
async function counted(service: TestService, tenant: string) {
  const rows = await service.ctx.db.manyOrNone<{ queue: string; status: string; count: number }>(
    `select queue, status, count(*)::int as count from svc_jobs where tenant_id = $1 group by 1, 2 order by 1, 2`, [tenant]);
  return rows;
}

beforeAll(async () => {
  database = await createJobsDatabase();
  await seed(database.url);
  // The migration counted nothing (the template was empty): count the seed as the migration's step 2 would.
  await queryOnce(database.url, `with already as (delete from svc_job_count_deltas returning 1)
    insert into svc_job_counts (tenant_id, queue, status, n) select tenant_id, queue, status, count(*) from svc_jobs group by 1, 2, 3
    on conflict (tenant_id, queue, status) do update set n = excluded.n`);
  // Both start at once: each looks for the retention tick at start, one of them claims it.
  [first, second] = await Promise.all([startJobsService({ database }), startJobsService({ database })]);
}, 60_000);
afterAll(async () => {
  await second?.close();
  await first?.close();
  await database?.drop();
});

describe('job retention', { timeout: 60_000 }, () => {
  it('deletes old succeeded and dead jobs once, on one instance, and keeps recent and unfinished ones', async () => {
    await waitFor(async () => {
      const [a, b] = await Promise.all([metricsOf(first), metricsOf(second)]);
      return deletedIn(a, 'succeeded') + deletedIn(b, 'succeeded') === DELETED.succeeded
        && deletedIn(a, 'dead') + deletedIn(b, 'dead') === DELETED.dead;
    });
    const left = await first.ctx.db.manyOrNone<{ tenant_id: string; status: string; n: number }>(
      `select tenant_id, status, count(*)::int as n from svc_jobs group by 1, 2 order by 1, 2`);
    expect(left).toEqual([
      { tenant_id: 'ret-a', status: 'dead', n: 2 },
      { tenant_id: 'ret-a', status: 'leased', n: 1 },
      { tenant_id: 'ret-a', status: 'queued', n: 3 },
      { tenant_id: 'ret-a', status: 'succeeded', n: 4 },
    ]);
    // One instance ran the tick: the other deleted nothing.
    const [a, b] = await Promise.all([metricsOf(first), metricsOf(second)]);
    const perInstance = [deletedIn(a, 'succeeded') + deletedIn(a, 'dead'), deletedIn(b, 'succeeded') + deletedIn(b, 'dead')].sort();
    expect(perInstance).toEqual([0, DELETED.succeeded + DELETED.dead]);
    // A second sweep finds nothing more to delete.
    expect(await pruneJobs(first.ctx.db, { succeededHours: 24, deadDays: 30 })).toEqual({ succeeded: 0, dead: 0 });
  });

  it('counts the deletions out of GET /jobs/stats, which equals a count of the jobs', async () => {
    const admin = userClient(first, 'Admin', 'ret-admin', 'ret-a');
    const stats = await admin('GET', '/jobs/stats');
    expect(stats.status).toBe(200);
    expect(stats.body.byStatus).toEqual({ queued: 3, leased: 1, succeeded: 4, dead: 2, failed: 0 });
    expect(stats.body.byQueue).toEqual(await counted(first, 'ret-a'));
    expect(stats.body.oldestQueuedSeconds).toBeGreaterThan(39 * 86_400);
    const other = await userClient(second, 'Admin', 'ret-admin-b', 'ret-b')('GET', '/jobs/stats');
    expect(other.body).toEqual({ byStatus: { queued: 0, leased: 0, succeeded: 0, dead: 0, failed: 0 }, byQueue: [], oldestQueuedSeconds: 0 });
  });
});

describe('the job counters', { timeout: 60_000 }, () => {
  it('follow enqueue, lease, complete and fail on both instances, across folds, exactly as a count of the jobs', async () => {
    const tenant = 'count-t';
    const user = userClient(first, 'Viewer', 'count-user', tenant);
    for (let i = 0; i < 6; i++) expect((await user('POST', '/jobs', { queue: i % 2 ? 'odd' : 'even', kind: 'k' })).status).toBe(201);
    await foldCounts(first.ctx.db);
    const worker = workerClient(second, (await mintWorker(second, ['odd', 'even'], tenant)).token);
    const leased = (await worker('/jobs/lease', { queues: ['odd', 'even'], capacity: 4, visibilitySecs: 30 })).body.jobs;
    expect(leased).toHaveLength(4);
    expect((await worker(`/jobs/${leased[0].id}/complete`, { leaseId: leased[0].leaseId, result: { ok: true } })).status).toBe(204);
    expect((await worker(`/jobs/${leased[1].id}/fail`, { leaseId: leased[1].leaseId, error: 'no', retryable: false })).status).toBe(200);
    expect((await worker(`/jobs/${leased[2].id}/fail`, { leaseId: leased[2].leaseId, error: 'again', retryable: true })).status).toBe(200);
    expect((await worker(`/jobs/${leased[3].id}/heartbeat`, { leaseId: leased[3].leaseId, visibilitySecs: 60 })).status).toBe(204);

    const admin = userClient(second, 'Admin', 'count-admin', tenant);
    const expected = await counted(first, tenant);
    expect(expected.map((row) => row.status).sort()).toEqual(['dead', 'leased', 'queued', 'queued', 'succeeded']);
    expect((await admin('GET', '/jobs/stats')).body.byQueue).toEqual(expected);
    await foldCounts(second.ctx.db);
    expect((await admin('GET', '/jobs/stats')).body.byQueue).toEqual(expected);
    const deltas = await first.ctx.db.one<{ n: number }>('select count(*)::int as n from svc_job_count_deltas');
    expect(deltas.n).toBe(0);
  });

  it('are folded by the statements as compiled: values bound, never formatted into the text (so SVC_DISTRIBUTED_CHECK knows where they were built)', async () => {
    const sent = captureStatements();
    try {
      await foldCounts(first.ctx.db);
    } finally {
      sent.stop();
    }
    const lock = sent.sent.filter((s) => s.values.includes(LOCK_KEYS.jobCountsFold));
    expect(lock.map((s) => s.text)).toContain('select pg_advisory_xact_lock($1::bigint)');
    expect(sent.sent.filter((s) => s.text.includes(String(LOCK_KEYS.jobCountsFold)))).toEqual([]);
    expect(sent.sent.some((s) => /^\s*with moved as \(delete from svc_job_count_deltas/.test(s.text))).toBe(true);
  });

  it('are emptied with the jobs by a truncate', async () => {
    await first.ctx.db.none('truncate svc_jobs');
    const counts = await first.ctx.db.one<{ n: number }>(
      'select (select count(*) from svc_job_counts) + (select count(*) from svc_job_count_deltas) as n');
    expect(Number(counts.n)).toBe(0);
    const stats = await userClient(first, 'Admin', 'count-admin', 'count-t')('GET', '/jobs/stats');
    expect(stats.body.byQueue).toEqual([]);
  });
});
