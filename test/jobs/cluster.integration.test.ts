/**
 * Two server instances on one database and four SDK workers process 5,000
 * jobs: every job ends succeeded or dead, none is completed twice, none is lost.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { createWorker, NonRetryableError, type Worker } from '../../worker/index.ts';
import { mintWorker, startJobsService, waitFor } from './helpers.ts';

const JOBS = 5000;
let first: TestService;
let second: TestService;

beforeAll(async () => {
  const env = { SVC_JOB_RECLAIM_INTERVAL: '0.5' };
  first = await startJobsService({ env });
  second = await startJobsService({ env, database: first.database });
});
afterAll(async () => {
  await second?.close();
  await first?.close();
});

// Every 100th job can never work (dead); every 50th-plus-25 fails its first attempt (retried).
function handler(job: { payload: { n: number }; attempts: number }) {
  if (job.payload.n % 100 === 0) throw new NonRetryableError('poison');
  if (job.payload.n % 50 === 25 && job.attempts === 1) throw new Error('flaky');
  return { n: job.payload.n };
}

it('processes 5,000 jobs across two instances and four workers exactly once each', async () => {
  const { token } = await mintWorker(first, ['bulk']);
  const inputs = Array.from({ length: JOBS }, (_, n) => ({ queue: 'bulk', kind: 'count', payload: { n }, maxAttempts: 3 }));
  await first.ctx.services.jobs.enqueueMany(inputs, { actorId: null, tenantId: null });

  const workers: Worker<{ n: number }>[] = [first, first, second, second].map((instance) => createWorker<{ n: number }>({
    baseUrl: instance.url, token, queues: ['bulk'], capacity: 50, pollIntervalMs: 100, handleSignals: false, handler,
  }));
  for (const w of workers) void w.start();
  const db = first.ctx.db;
  await waitFor(async () => {
    const { done } = await db.one(`select count(*) as done from svc_jobs where status in ('succeeded', 'dead')`);
    return done === JOBS;
  }, 60_000);
  await Promise.all(workers.map((w) => w.stop()));

  const byStatus = await db.manyOrNone('select status, count(*) from svc_jobs group by status order by status');
  expect(byStatus).toEqual([{ status: 'dead', count: JOBS / 100 }, { status: 'succeeded', count: JOBS - JOBS / 100 }]);
  // Exactly one accepted completion per succeeded job, none for a dead one.
  const twice = await db.manyOrNone(
    `select stream_id from svc_events where stream_type = 'Job' and event_type = 'JobSucceeded'
      group by stream_id having count(*) > 1`);
  expect(twice).toEqual([]);
  const succeededEvents = await db.one(`select count(*) from svc_events where event_type = 'JobSucceeded'`);
  expect(succeededEvents.count).toBe(JOBS - JOBS / 100);
  const completed = workers.reduce((sum, w) => sum + w.stats.completed, 0);
  expect(completed).toBe(JOBS - JOBS / 100);
  const retried = await db.one(`select count(*) from svc_jobs where status = 'succeeded' and attempts = 2`);
  expect(retried.count).toBe(JOBS / 50);
  // Both instances served workers.
  expect(workers.slice(0, 2).reduce((s, w) => s + w.stats.leased, 0)).toBeGreaterThan(0);
  expect(workers.slice(2).reduce((s, w) => s + w.stats.leased, 0)).toBeGreaterThan(0);
}, 90_000);
