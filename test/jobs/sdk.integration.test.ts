/**
 * The worker SDK (`svc-gen/worker`) driving real workers against a running
 * server: batching, progress, retries, dead jobs, heartbeats, graceful stop
 * and transient HTTP failures.
 */
import { SystemScope } from '../../runtime/tenancy/index.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { createWorker, NonRetryableError, type WorkerOptions } from '../../worker/index.ts';
import { jobEvents, mintWorker, startJobsService, waitFor } from './helpers.ts';
import { startProxy } from './proxy.ts';

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
const freshQueue = () => `sdk-${++seq}-${Date.now()}`;
const caller = { actorId: 'sdk-test', tenantId: null };

async function enqueue(queue: string, count: number, extra: Record<string, unknown> = {}) {
  const jobs = await service.ctx.services.jobs.enqueueMany(
    Array.from({ length: count }, (_, n) => ({ queue, kind: 'work', payload: { n }, ...extra })), caller);
  return jobs.map((job) => job.id);
}

function worker(queue: string, options: Partial<WorkerOptions<{ n: number }>> & Pick<WorkerOptions<{ n: number }>, 'handler'>) {
  return createWorker<{ n: number }>({
    baseUrl: service.url, token, queues: [queue], capacity: 10, visibilitySecs: 30, pollIntervalMs: 50,
    handleSignals: false, ...options,
  });
}

const statusCounts = async (queue: string) => {
  const rows = await service.ctx.db.manyOrNone('select status, count(*) from svc_jobs where queue = $1 group by status', [queue]);
  return Object.fromEntries(rows.map((r) => [r.status, r.count]));
};

describe('worker SDK', () => {
  it('runs every job once, stores results, and acknowledges in batches', async () => {
    const queue = freshQueue();
    const ids = await enqueue(queue, 300);
    const proxy = await startProxy(service.url);
    const w = createWorker<{ n: number }>({
      baseUrl: proxy.url, token, queues: [queue], capacity: 50, pollIntervalMs: 50, handleSignals: false,
      handler: (job) => ({ double: job.payload.n * 2 }),
    });
    void w.start();
    await waitFor(async () => (await statusCounts(queue)).succeeded === 300);
    await w.stop();
    await proxy.close();
    expect(w.stats).toMatchObject({ completed: 300, failed: 0, lost: 0 });
    const view = await service.ctx.services.jobs.get(ids[7], SystemScope.ALL);
    expect(view).toMatchObject({ status: 'succeeded', attempts: 1, result: { double: 14 } });
    const batches = proxy.counts.get('POST /jobs/complete') ?? 0;
    expect(batches).toBeGreaterThan(0);
    expect(batches).toBeLessThanOrEqual(30); // far fewer requests than jobs
  });

  it('retries a throwing handler with backoff and sends a NonRetryableError straight to dead', async () => {
    const queue = freshQueue();
    const [flaky] = await enqueue(queue, 1, { kind: 'flaky' });
    const [fatal] = await service.ctx.services.jobs.enqueueMany([{ queue, kind: 'fatal' }], caller).then((j) => j.map((x) => x.id));
    const w = worker(queue, {
      handler: (job) => {
        if (job.kind === 'fatal') throw new NonRetryableError('cannot ever work');
        if (job.attempts === 1) throw new Error('transient glitch');
        return 'ok';
      },
    });
    void w.start();
    await waitFor(async () => (await service.ctx.services.jobs.get(flaky, SystemScope.ALL))?.status === 'succeeded', 15_000);
    await w.stop();
    expect(await service.ctx.services.jobs.get(flaky, SystemScope.ALL)).toMatchObject({ attempts: 2, result: 'ok' });
    expect(await service.ctx.services.jobs.get(fatal, SystemScope.ALL)).toMatchObject({ status: 'dead', attempts: 1, error: 'cannot ever work' });
    expect(await jobEvents(service, flaky)).toEqual(['JobEnqueued', 'JobLeased', 'JobRetryScheduled', 'JobLeased', 'JobSucceeded']);
    expect(w.stats.failed).toBe(2);
  });

  it('heartbeats keep a long job leased past its visibility window (no reclaim)', async () => {
    const queue = freshQueue();
    const [id] = await enqueue(queue, 1);
    const w = worker(queue, {
      visibilitySecs: 1,
      handler: () => new Promise((resolve) => setTimeout(() => resolve('slow done'), 2500)),
    });
    void w.start();
    await waitFor(async () => (await service.ctx.services.jobs.get(id, SystemScope.ALL))?.status === 'succeeded', 10_000);
    await w.stop();
    expect(await service.ctx.services.jobs.get(id, SystemScope.ALL)).toMatchObject({ attempts: 1, result: 'slow done' });
    expect(await jobEvents(service, id)).toEqual(['JobEnqueued', 'JobLeased', 'JobSucceeded']);
  });

  it('reports progress through the server (lease extended) from the handler', async () => {
    const queue = freshQueue();
    const [id] = await enqueue(queue, 1);
    const w = worker(queue, {
      visibilitySecs: 1,
      handler: async (job) => {
        for (let p = 25; p <= 100; p += 25) {
          await job.progress(p, `step ${p}`, { p });
          await new Promise((resolve) => setTimeout(resolve, 400));
        }
        return 'progressed';
      },
    });
    void w.start();
    await waitFor(async () => (await service.ctx.services.jobs.get(id, SystemScope.ALL))?.status === 'succeeded', 10_000);
    await w.stop();
    expect(await jobEvents(service, id)).toEqual(['JobEnqueued', 'JobLeased', 'JobSucceeded']);
  });

  it('stop() lets in-flight jobs finish, acknowledges them, and leases nothing more', async () => {
    const queue = freshQueue();
    const [first] = await enqueue(queue, 1);
    let started = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const w = worker(queue, {
      handler: async () => {
        started++;
        await released;
        return 'finished';
      },
    });
    void w.start();
    await waitFor(async () => started === 1);
    const stopping = w.stop(); // the job is in flight: stop waits for it
    release();
    await stopping;
    expect(await service.ctx.services.jobs.get(first, SystemScope.ALL)).toMatchObject({ status: 'succeeded', result: 'finished' });
    const [later] = await enqueue(queue, 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await service.ctx.services.jobs.get(later, SystemScope.ALL))?.status).toBe('queued');
  });

  it('survives transient HTTP failures (503, 429, dropped connections) by retrying', async () => {
    const queue = freshQueue();
    await enqueue(queue, 40);
    const proxy = await startProxy(service.url);
    proxy.fault = (method, path, seen) => {
      if (path === '/jobs/lease' && seen <= 2) return '503';
      if (path === '/jobs/lease' && seen === 3) return '429';
      if (path === '/jobs/complete' && seen === 1) return 'drop';
      return 'pass';
    };
    const errors: unknown[] = [];
    const w = createWorker({
      baseUrl: proxy.url, token, queues: [queue], capacity: 20, pollIntervalMs: 50, handleSignals: false,
      retryBaseMs: 20, handler: () => 'ok', onError: (e) => errors.push(e),
    });
    void w.start();
    await waitFor(async () => (await statusCounts(queue)).succeeded === 40);
    await w.stop();
    await proxy.close();
    expect(proxy.counts.get('POST /jobs/lease')).toBeGreaterThan(3);
    expect(errors).toEqual([]);
  });
});
