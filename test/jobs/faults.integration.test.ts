/**
 * Crash recovery: the reclaim sweep, a worker process killed mid-lease
 * (SIGKILL) and one stopped gracefully (SIGTERM).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { SystemScope } from '../../runtime/tenancy/index.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { createWorker } from '../../worker/index.ts';
import { jobEvents, mintWorker, startJobsService, waitFor, workerClient } from './helpers.ts';

let service: TestService;
let token: string;

beforeAll(async () => {
  service = await startJobsService({ env: { SVC_JOB_RECLAIM_INTERVAL: '0.2' } });
  token = (await mintWorker(service, ['*'])).token;
});
afterAll(async () => {
  await service?.close();
});

let seq = 0;
const freshQueue = () => `fault-${++seq}-${Date.now()}`;
const enqueue = async (queue: string, count: number, maxAttempts?: number) =>
  (await service.ctx.services.jobs.enqueueMany(
    Array.from({ length: count }, () => ({ queue, kind: 'k', maxAttempts })), { actorId: null, tenantId: null },
  )).map((job) => job.id);
const get = (id: string) => service.ctx.services.jobs.get(id, SystemScope.ALL);

describe('reclaim sweep', () => {
  it('returns an expired lease to the queue; the old lease is then stale (409)', async () => {
    const queue = freshQueue();
    const [id] = await enqueue(queue, 1);
    const worker = workerClient(service, token);
    const [job] = (await worker('/jobs/lease', { queues: [queue], capacity: 1, visibilitySecs: 1 })).body.jobs;
    await waitFor(async () => (await get(id))?.status === 'queued', 5000);
    expect(await jobEvents(service, id)).toEqual(['JobEnqueued', 'JobLeased', 'JobReclaimed']);
    expect((await worker(`/jobs/${id}/complete`, { leaseId: job.leaseId, result: 1 })).status).toBe(409);
    const [again] = (await worker('/jobs/lease', { queues: [queue], capacity: 1, visibilitySecs: 30 })).body.jobs;
    expect(again).toMatchObject({ id, attempts: 2 });
  });

  it('sends a reclaimed job whose attempts are exhausted to dead', async () => {
    const queue = freshQueue();
    const [id] = await enqueue(queue, 1, 1);
    await workerClient(service, token)('/jobs/lease', { queues: [queue], capacity: 1, visibilitySecs: 1 });
    await waitFor(async () => (await get(id))?.status === 'dead', 5000);
    expect(await get(id)).toMatchObject({ attempts: 1, maxAttempts: 1 });
    expect(await jobEvents(service, id)).toEqual(['JobEnqueued', 'JobLeased', 'JobDead']);
  });

  it('moves each expired lease once when several sweeps race', async () => {
    const queue = freshQueue();
    const ids = await enqueue(queue, 30);
    await workerClient(service, token)('/jobs/lease', { queues: [queue], capacity: 30, visibilitySecs: 1 });
    await service.ctx.db.none(`update svc_jobs set visible_at = now() - interval '1 second' where queue = $1`, [queue]);
    await Promise.all([1, 2, 3].map(() => service.ctx.services.jobs.reclaim()));
    for (const id of ids.slice(0, 5)) expect(await jobEvents(service, id)).toEqual(['JobEnqueued', 'JobLeased', 'JobReclaimed']);
    const { count } = await service.ctx.db.one(
      `select count(*) from svc_events where stream_type = 'Job' and event_type = 'JobReclaimed' and stream_id = any($1)`, [ids]);
    expect(count).toBe(30);
  });
});

function startChild(queue: string, mode: 'hang' | 'slow', jobMs = 800): { child: ChildProcess; lines: string[] } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'worker-process.ts')], {
    env: { ...process.env, BASE_URL: service.url, WORKER_TOKEN: token, QUEUE: queue, WORKER_MODE: mode,
      VISIBILITY_SECS: '1', JOB_MS: String(jobMs), CAPACITY: '5' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  child.stdout!.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  return { child, lines };
}

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
  else child.once('exit', (code) => resolve(code));
});

describe('worker processes', () => {
  it('a worker killed mid-lease loses no job: the leases lapse and another worker completes them', async () => {
    const queue = freshQueue();
    const ids = await enqueue(queue, 3);
    const { child, lines } = startChild(queue, 'hang');
    await waitFor(async () => lines.filter((l) => l.startsWith('started')).length === 3, 20_000);
    child.kill('SIGKILL');
    await exited(child);
    const rescuer = createWorker({
      baseUrl: service.url, token, queues: [queue], capacity: 5, pollIntervalMs: 50, handleSignals: false,
      handler: () => 'rescued',
    });
    void rescuer.start();
    await waitFor(async () => (await Promise.all(ids.map(get))).every((job) => job?.status === 'succeeded'), 15_000);
    await rescuer.stop();
    for (const id of ids) {
      expect(await get(id)).toMatchObject({ attempts: 2, result: 'rescued' });
      expect(await jobEvents(service, id)).toEqual(['JobEnqueued', 'JobLeased', 'JobReclaimed', 'JobLeased', 'JobSucceeded']);
    }
  }, 45_000);

  it('SIGTERM stops a worker gracefully: in-flight jobs finish and are acknowledged before it exits', async () => {
    const queue = freshQueue();
    const [id] = await enqueue(queue, 1);
    const { child, lines } = startChild(queue, 'slow', 1500);
    await waitFor(async () => lines.some((l) => l === `started ${id}`), 20_000);
    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
    expect(lines.at(-1)).toBe('stopped');
    expect(await get(id)).toMatchObject({ status: 'succeeded', attempts: 1, result: { by: 'child', pid: child.pid } });
  }, 45_000);
});
