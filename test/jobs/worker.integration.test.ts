/**
 * Jobs, worker plane: lease, heartbeat, progress, complete, fail and the
 * batched complete, every row of the spec's table against a running server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { startJobsService, call, jobEvents, mintWorker, userClient, workerClient } from './helpers.ts';

let service: TestService;
let worker: ReturnType<typeof workerClient>;
let workerToken: string;

beforeAll(async () => {
  service = await startJobsService();
  workerToken = (await mintWorker(service, ['*'])).token;
  worker = workerClient(service, workerToken);
});
afterAll(async () => {
  await service?.close();
});

let queueSeq = 0;
/** A fresh queue per test, so tests do not lease each other's jobs. */
const freshQueue = () => `wq-${++queueSeq}-${Date.now()}`;

async function enqueue(queue: string, extra: Record<string, unknown> = {}): Promise<string> {
  const reply = await userClient(service, 'Viewer')('POST', '/jobs', { queue, kind: 'task', payload: { n: 1 }, ...extra });
  return reply.body.id;
}

/** Leases one job of `queue`, enqueuing it first when the queue is fresh. */
async function leaseOne(queue: string, visibilitySecs = 30, enqueueFirst = true) {
  if (enqueueFirst) await enqueue(queue);
  const reply = await worker('/jobs/lease', { queues: [queue], capacity: 1, visibilitySecs });
  expect(reply.status).toBe(200);
  expect(reply.body.jobs).toHaveLength(1);
  return reply.body.jobs[0] as { id: string; leaseId: string; attempts: number };
}

const row = (id: string) => service.ctx.db.one('select *, extract(epoch from visible_at - now()) as secs_left from svc_jobs where id = $1', [id]);

describe('POST /jobs/lease', () => {
  it('leases with the spec fields, a unique leaseId per job, counts attempts and appends JobLeased', async () => {
    const queue = freshQueue();
    const ids = [await enqueue(queue), await enqueue(queue)];
    const reply = await worker('/jobs/lease', { queues: [queue], capacity: 10, visibilitySecs: 30 });
    expect(reply.status).toBe(200);
    expect(reply.body.jobs.map((j: { id: string }) => j.id)).toEqual(ids);
    const [job] = reply.body.jobs;
    expect(Object.keys(job).sort()).toEqual(['attempts', 'id', 'kind', 'leaseId', 'maxAttempts', 'payload', 'queue']);
    expect(job).toMatchObject({ queue, kind: 'task', payload: { n: 1 }, attempts: 1, maxAttempts: 5 });
    expect(new Set(reply.body.jobs.map((j: { leaseId: string }) => j.leaseId)).size).toBe(2);
    expect((await row(ids[0])).status).toBe('leased');
    expect(await jobEvents(service, ids[0])).toEqual(['JobEnqueued', 'JobLeased']);
  });

  it('answers concurrent leases of one token each with its own jobs, at most its capacity (combined into shared statements)', async () => {
    const queue = freshQueue();
    const other = freshQueue();
    for (let i = 0; i < 25; i++) await enqueue(queue);
    const elsewhere = await enqueue(other);
    const replies = await Promise.all([
      ...[10, 10, 3, 10].map((capacity) => worker('/jobs/lease', { queues: [queue], capacity, visibilitySecs: 30 })),
      worker('/jobs/lease', { queues: [other], capacity: 5, visibilitySecs: 30 }),
    ]);
    expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200]);
    const lists = replies.slice(0, 4).map((reply) => reply.body.jobs as Array<{ id: string; leaseId: string; queue: string }>);
    lists.forEach((jobs, i) => expect(jobs.length).toBeLessThanOrEqual([10, 10, 3, 10][i]));
    const all = lists.flat();
    expect(all).toHaveLength(25);
    expect(new Set(all.map((job) => job.id)).size).toBe(25);
    expect(new Set(all.map((job) => job.leaseId)).size).toBe(25);
    expect(all.every((job) => job.queue === queue)).toBe(true);
    expect(replies[4].body.jobs.map((job: { id: string }) => job.id)).toEqual([elsewhere]);
    for (const job of all.slice(0, 3)) {
      expect((await row(job.id)).lease_id).toBe(job.leaseId);
      expect(await jobEvents(service, job.id)).toEqual(['JobEnqueued', 'JobLeased']);
    }
  });

  it('orders eligible jobs by priority (higher first), then age, and skips jobs not yet visible', async () => {
    const queue = freshQueue();
    const low = await enqueue(queue, { priority: 0 });
    const high = await enqueue(queue, { priority: 10 });
    const older = await enqueue(queue, { priority: 5 });
    const newer = await enqueue(queue, { priority: 5 });
    const later = await enqueue(queue, { priority: 99 });
    await service.ctx.db.none(`update svc_jobs set visible_at = now() + interval '1 hour' where id = $1`, [later]);
    const reply = await worker('/jobs/lease', { queues: [queue], capacity: 10, visibilitySecs: 30 });
    expect(reply.body.jobs.map((j: { id: string }) => j.id)).toEqual([high, older, newer, low]);
  });

  it('clamps capacity to 1..100', async () => {
    const queue = freshQueue();
    await service.ctx.services.jobs.enqueueMany(Array.from({ length: 105 }, () => ({ queue, kind: 'k' })), { actorId: null, tenantId: null });
    expect((await worker('/jobs/lease', { queues: [queue], capacity: 0, visibilitySecs: 30 })).body.jobs).toHaveLength(1);
    expect((await worker('/jobs/lease', { queues: [queue], capacity: 1000, visibilitySecs: 30 })).body.jobs).toHaveLength(100);
  });

  it('clamps visibilitySecs to 1..86400', async () => {
    const queue = freshQueue();
    const a = await enqueue(queue);
    await worker('/jobs/lease', { queues: [queue], capacity: 1, visibilitySecs: 999_999 });
    expect(Number((await row(a)).secs_left)).toBeCloseTo(86_400, -1);
    const b = await enqueue(queue);
    await worker('/jobs/lease', { queues: [queue], capacity: 1, visibilitySecs: 0 });
    expect(Number((await row(b)).secs_left)).toBeLessThanOrEqual(1);
  });

  it('answers 400 when queues is empty or missing', async () => {
    expect((await worker('/jobs/lease', { queues: [], capacity: 1, visibilitySecs: 30 })).status).toBe(400);
    expect((await worker('/jobs/lease', { capacity: 1, visibilitySecs: 30 })).status).toBe(400);
  });

  it('answers 401 for a missing, invalid or revoked worker token', async () => {
    const body = { queues: ['q'], capacity: 1, visibilitySecs: 30 };
    expect((await call(service.url, 'POST', '/jobs/lease', { body })).status).toBe(401);
    expect((await call(service.url, 'POST', '/jobs/lease', { body, headers: { 'x-worker-token': 'wkr_nope' } })).status).toBe(401);
    const userJwt = await service.token({ role: 'Admin' });
    expect((await call(service.url, 'POST', '/jobs/lease', { body, headers: { 'x-worker-token': userJwt } })).status).toBe(401);
    const minted = await mintWorker(service, ['q']);
    expect((await workerClient(service, minted.token)('/jobs/lease', body)).status).toBe(200);
    expect((await userClient(service, 'Admin', 'admin')('DELETE', `/jobs/workers/${minted.id}`)).status).toBe(204);
    const revoked = await workerClient(service, minted.token)('/jobs/lease', body);
    expect(revoked.status).toBe(401);
    expect(revoked.body.error).toBeTypeOf('string');
  });

  it('answers 403 when a requested queue is outside the token\'s queues; `*` may lease any', async () => {
    const scoped = workerClient(service, (await mintWorker(service, ['mail'])).token);
    expect((await scoped('/jobs/lease', { queues: ['mail'], capacity: 1, visibilitySecs: 30 })).status).toBe(200);
    const denied = await scoped('/jobs/lease', { queues: ['mail', 'billing'], capacity: 1, visibilitySecs: 30 });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBeTypeOf('string');
    expect((await worker('/jobs/lease', { queues: ['billing'], capacity: 1, visibilitySecs: 30 })).status).toBe(200);
  });

  it('never hands one job to two concurrent lease calls (SKIP LOCKED)', async () => {
    const queue = freshQueue();
    await service.ctx.services.jobs.enqueueMany(Array.from({ length: 60 }, () => ({ queue, kind: 'k' })), { actorId: null, tenantId: null });
    const replies = await Promise.all(Array.from({ length: 6 }, () =>
      worker('/jobs/lease', { queues: [queue], capacity: 15, visibilitySecs: 30 })));
    const ids = replies.flatMap((r) => r.body.jobs.map((j: { id: string }) => j.id));
    expect(ids).toHaveLength(60);
    expect(new Set(ids).size).toBe(60);
  });

  it('a tenant-bound token leases only its tenant\'s jobs', async () => {
    const queue = freshQueue();
    const mine = (await userClient(service, 'Viewer', 'u', 'tenant-w')('POST', '/jobs', { queue, kind: 'k' })).body.id;
    const theirs = (await userClient(service, 'Viewer', 'u', 'tenant-v')('POST', '/jobs', { queue, kind: 'k' })).body.id;
    const scoped = workerClient(service, (await mintWorker(service, ['*'], 'tenant-w')).token);
    const reply = await scoped('/jobs/lease', { queues: [queue], capacity: 10, visibilitySecs: 30 });
    expect(reply.body.jobs.map((j: { id: string }) => j.id)).toEqual([mine]);
    // A token of any tenant takes the rest.
    const rest = await worker('/jobs/lease', { queues: [queue], capacity: 10, visibilitySecs: 30 });
    expect(rest.body.jobs.map((j: { id: string }) => j.id)).toEqual([theirs]);
  });
});

describe('POST /jobs/{id}/heartbeat', () => {
  it('answers 204 and extends the deadline for the current lease', async () => {
    const queue = freshQueue();
    const job = await leaseOne(queue, 5);
    const reply = await worker(`/jobs/${job.id}/heartbeat`, { leaseId: job.leaseId, visibilitySecs: 600 });
    expect(reply.status).toBe(204);
    expect(Number((await row(job.id)).secs_left)).toBeGreaterThan(590);
  });

  it('answers 409 {error:"lease lost"} for a stale lease and changes nothing', async () => {
    const job = await leaseOne(freshQueue(), 60);
    const before = await row(job.id);
    const reply = await worker(`/jobs/${job.id}/heartbeat`, { leaseId: 'stale', visibilitySecs: 600 });
    expect(reply).toEqual({ status: 409, body: { error: 'lease lost', code: 'CONFLICT' } });
    expect((await row(job.id)).visible_at).toBe(before.visible_at);
  });
});

describe('POST /jobs/{id}/progress', () => {
  it('answers 204, extends the lease and writes nothing to the event log', async () => {
    const job = await leaseOne(freshQueue(), 5);
    const reply = await worker(`/jobs/${job.id}/progress`, { leaseId: job.leaseId, percent: 40, message: 'half', data: { x: 1 } });
    expect(reply.status).toBe(204);
    expect(await jobEvents(service, job.id)).toEqual(['JobEnqueued', 'JobLeased']);
    await worker(`/jobs/${job.id}/heartbeat`, { leaseId: job.leaseId, visibilitySecs: 2 });
    await worker(`/jobs/${job.id}/progress`, { leaseId: job.leaseId, percent: 50, message: 'more', data: null });
    // Progress extends by the lease's length (the last one asked for).
    expect(Number((await row(job.id)).secs_left)).toBeGreaterThan(1);
  });

  it('answers 409 for a stale lease and 400 for a non-numeric percent', async () => {
    const job = await leaseOne(freshQueue());
    expect((await worker(`/jobs/${job.id}/progress`, { leaseId: 'stale', percent: 1, message: 'm', data: null })).status).toBe(409);
    expect((await worker(`/jobs/${job.id}/progress`, { leaseId: job.leaseId, percent: 'x', message: 'm' })).status).toBe(400);
  });

  it('takes percent, message and data as optional (CONTRACT section 14)', async () => {
    const job = await leaseOne(freshQueue());
    expect((await worker(`/jobs/${job.id}/progress`, { leaseId: job.leaseId })).status).toBe(204);
    expect((await worker(`/jobs/${job.id}/progress`, { leaseId: job.leaseId, message: 'only a message' })).status).toBe(204);
  });

  it('checks the lease first: a stale lease is 409 whatever else is wrong in the body', async () => {
    const job = await leaseOne(freshQueue());
    expect((await worker(`/jobs/${job.id}/progress`, { leaseId: 'stale', percent: 'x', message: 7 })).status).toBe(409);
    expect((await worker(`/jobs/${job.id}/heartbeat`, { leaseId: 'stale', visibilitySecs: 'soon' })).status).toBe(409);
    expect((await worker(`/jobs/${job.id}/fail`, { leaseId: 'stale', error: 42, retryable: 'maybe' })).status).toBe(409);
  });
});

describe('the order of a call\'s refusals: 401, then 403 and 409, then 400', () => {
  const stranger = { 'x-worker-token': 'wkr_nope' };
  const send = (path: string, body: unknown, headers: Record<string, string> = stranger) => call(service.url, 'POST', path, { body, headers });

  it('answers 401 to an unknown or missing token whatever is wrong in the body, on every call', async () => {
    const job = await leaseOne(freshQueue());
    expect((await send('/jobs/lease', { queues: [] })).status).toBe(401);
    expect((await send('/jobs/lease', { queues: ['q'], capacity: 'many' })).status).toBe(401);
    expect((await send('/jobs/complete', { items: [] })).status).toBe(401);
    expect((await send(`/jobs/${job.id}/complete`, { result: 1 })).status).toBe(401);
    expect((await send(`/jobs/${job.id}/fail`, { leaseId: job.leaseId, error: 42 })).status).toBe(401);
    expect((await send(`/jobs/${job.id}/heartbeat`, ['not an object'])).status).toBe(401);
    expect((await send(`/jobs/${job.id}/progress`, { leaseId: job.leaseId, percent: 'x' }, {})).status).toBe(401);
    // The current lease changed nothing: the job is still its worker's.
    expect((await worker(`/jobs/${job.id}/complete`, { leaseId: job.leaseId, result: 1 })).status).toBe(204);
  });

  it('answers 403 for a queue the token lacks before a 400 for the rest of the lease body', async () => {
    const scoped = workerClient(service, (await mintWorker(service, ['mail'])).token);
    expect((await scoped('/jobs/lease', { queues: ['billing'], capacity: 'many' })).status).toBe(403);
    expect((await scoped('/jobs/lease', { queues: ['mail'], capacity: 'many' })).status).toBe(400);
    expect((await scoped('/jobs/lease', { queues: [] })).status).toBe(400);
  });

  it('answers 400 for a current lease with a bad body, and changes nothing', async () => {
    const job = await leaseOne(freshQueue());
    expect((await worker(`/jobs/${job.id}/fail`, { leaseId: job.leaseId, error: 42 })).status).toBe(400);
    expect((await worker(`/jobs/${job.id}/heartbeat`, { leaseId: job.leaseId, visibilitySecs: 'soon' })).status).toBe(400);
    expect(await row(job.id)).toMatchObject({ status: 'leased', lease_id: job.leaseId });
  });
});

describe('the retry backoff (svc_job_backoff_secs, the one rule)', () => {
  it('is max(1, floor(min(3600, 2^attempts) * jitter))', async () => {
    const cases = [[1, 0.5, 1], [1, 0.99, 1], [3, 0.99, 7], [11, 0.5, 1024], [12, 0.999, 3596], [40, 0.5, 1800]];
    for (const [attempts, jitter, secs] of cases) {
      const { delay } = await service.ctx.db.one('select svc_job_backoff_secs($1, $2) as delay', [attempts, jitter]);
      expect([attempts, jitter, delay]).toEqual([attempts, jitter, secs]);
    }
  });
});

describe('free-form JSON from a worker (result, progress data)', () => {
  // 100,000 levels fit in the 1 MiB body; JSON.stringify and jsonb overflow their stacks on them. Sent as text: the client cannot stringify them either.
  const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
  const send = async (path: string, body: string) => {
    const response = await fetch(service.url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-worker-token': workerToken }, body });
    return { status: response.status, body: await response.json().catch(() => null) };
  };

  it('is a 400 VALIDATION_ERROR naming the field when nested too deep, after the lease check, and changes nothing', async () => {
    const job = await leaseOne(freshQueue());
    const result = await send(`/jobs/${job.id}/complete`, `{"leaseId": "${job.leaseId}", "result": ${deep(100_000)}}`);
    expect(result).toEqual({ status: 400, body: expect.objectContaining({ code: 'VALIDATION_ERROR', field: 'result.0' }) });
    const progress = await send(`/jobs/${job.id}/progress`, `{"leaseId": "${job.leaseId}", "data": ${deep(100_000)}}`);
    expect(progress).toEqual({ status: 400, body: expect.objectContaining({ code: 'VALIDATION_ERROR', field: 'data.0' }) });
    const batch = await send('/jobs/complete', `{"items": [{"id": "${job.id}", "leaseId": "${job.leaseId}", "result": ${deep(5_000)}}]}`);
    expect(batch).toEqual({ status: 400, body: expect.objectContaining({ code: 'VALIDATION_ERROR', field: 'items.0.result.0' }) });
    expect((await row(job.id)).status).toBe('leased');
    // A stale lease is still 409 first, whatever the body holds (CONTRACT section 14).
    expect((await send(`/jobs/${job.id}/complete`, `{"leaseId": "stale", "result": ${deep(5_000)}}`)).status).toBe(409);
    expect((await send(`/jobs/${job.id}/progress`, `{"leaseId": "stale", "data": ${deep(5_000)}}`)).status).toBe(409);
    expect((await worker(`/jobs/${job.id}/complete`, { leaseId: job.leaseId, result: { ok: true } })).status).toBe(204);
  });
});

describe('POST /jobs/{id}/complete', () => {
  it('answers 204, stores the result and appends JobSucceeded', async () => {
    const job = await leaseOne(freshQueue());
    expect((await worker(`/jobs/${job.id}/complete`, { leaseId: job.leaseId, result: { ok: [1, 2] } })).status).toBe(204);
    const view = await userClient(service, 'Viewer')('GET', `/jobs/${job.id}`);
    expect(view.body).toMatchObject({ status: 'succeeded', attempts: 1, result: { ok: [1, 2] }, error: null });
    expect(await jobEvents(service, job.id)).toEqual(['JobEnqueued', 'JobLeased', 'JobSucceeded']);
  });

  it('answers 409 for a stale lease (also a second complete) and changes nothing', async () => {
    const job = await leaseOne(freshQueue());
    expect((await worker(`/jobs/${job.id}/complete`, { leaseId: 'stale', result: 1 })).status).toBe(409);
    expect((await row(job.id)).status).toBe('leased');
    await worker(`/jobs/${job.id}/complete`, { leaseId: job.leaseId, result: 1 });
    const again = await worker(`/jobs/${job.id}/complete`, { leaseId: job.leaseId, result: 2 });
    expect(again).toEqual({ status: 409, body: { error: 'lease lost', code: 'CONFLICT' } });
    expect((await row(job.id)).result).toBe(1);
    expect(await jobEvents(service, job.id)).toEqual(['JobEnqueued', 'JobLeased', 'JobSucceeded']);
  });

  it('answers 400 without a leaseId', async () => {
    const job = await leaseOne(freshQueue());
    expect((await worker(`/jobs/${job.id}/complete`, { result: 1 })).status).toBe(400);
  });

  it('answers each of many concurrent completes on its own (combined into shared statements)', async () => {
    const queue = freshQueue();
    for (let i = 0; i < 30; i++) await enqueue(queue);
    const { body } = await worker('/jobs/lease', { queues: [queue], capacity: 30, visibilitySecs: 30 });
    const jobs = body.jobs as Array<{ id: string; leaseId: string }>;
    // Every third call carries a stale lease: it must get its own 409 while the others succeed.
    const replies = await Promise.all(jobs.map((job, i) =>
      worker(`/jobs/${job.id}/complete`, { leaseId: i % 3 === 0 ? 'stale' : job.leaseId, result: { i } })));
    expect(replies.map((reply) => reply.status)).toEqual(jobs.map((_, i) => (i % 3 === 0 ? 409 : 204)));
    for (const [i, job] of jobs.entries()) {
      const stored = await row(job.id);
      expect(stored.status).toBe(i % 3 === 0 ? 'leased' : 'succeeded');
      if (i % 3 !== 0) expect(stored.result).toEqual({ i });
    }
    expect(await jobEvents(service, jobs[1].id)).toEqual(['JobEnqueued', 'JobLeased', 'JobSucceeded']);
    expect(await jobEvents(service, jobs[0].id)).toEqual(['JobEnqueued', 'JobLeased']);
  });

  it('lets one of two concurrent completes of the same lease win; the other is 409', async () => {
    const job = await leaseOne(freshQueue());
    const replies = await Promise.all([1, 2].map((n) => worker(`/jobs/${job.id}/complete`, { leaseId: job.leaseId, result: n })));
    expect(replies.map((reply) => reply.status).sort()).toEqual([204, 409]);
    expect(await jobEvents(service, job.id)).toEqual(['JobEnqueued', 'JobLeased', 'JobSucceeded']);
  });

  it('answers 401 to a revoked token\'s completes sent alongside a valid token\'s', async () => {
    const queue = freshQueue();
    const minted = await mintWorker(service, [queue]);
    const other = workerClient(service, minted.token);
    await enqueue(queue);
    await enqueue(queue);
    const { body } = await other('/jobs/lease', { queues: [queue], capacity: 2, visibilitySecs: 30 });
    const [a, b] = body.jobs as Array<{ id: string; leaseId: string }>;
    const admin = userClient(service, 'Admin', 'admin');
    expect((await admin('DELETE', `/jobs/workers/${minted.id}`)).status).toBe(204);
    const [revoked, valid] = await Promise.all([
      other(`/jobs/${a.id}/complete`, { leaseId: a.leaseId, result: null }),
      worker(`/jobs/${b.id}/complete`, { leaseId: b.leaseId, result: null }),
    ]);
    expect(revoked.status).toBe(401);
    expect(valid.status).toBe(204);
    expect((await row(a.id)).status).toBe('leased');
  });
});

describe('POST /jobs/complete (batch)', () => {
  it('completes current leases in one call and reports the stale ones', async () => {
    const queue = freshQueue();
    await enqueue(queue);
    await enqueue(queue);
    const { body } = await worker('/jobs/lease', { queues: [queue], capacity: 2, visibilitySecs: 30 });
    const [a, b] = body.jobs;
    const reply = await worker('/jobs/complete', { items: [
      { id: a.id, leaseId: a.leaseId, result: 'A' }, { id: b.id, leaseId: 'stale', result: 'B' },
    ] });
    expect(reply).toEqual({ status: 200, body: { completed: [a.id], stale: [b.id] } });
    expect((await row(a.id)).status).toBe('succeeded');
    expect((await row(b.id)).status).toBe('leased');
  });

  it('answers 400 for an empty or malformed batch', async () => {
    expect((await worker('/jobs/complete', { items: [] })).status).toBe(400);
    expect((await worker('/jobs/complete', { items: [{ id: 'x' }] })).status).toBe(400);
  });
});

describe('POST /jobs/{id}/fail', () => {
  it('retries a retryable failure with backoff: 200 {outcome:"retry", delaySecs}, job queued later', async () => {
    const job = await leaseOne(freshQueue());
    const reply = await worker(`/jobs/${job.id}/fail`, { leaseId: job.leaseId, error: 'boom', retryable: true });
    expect(reply.status).toBe(200);
    expect(reply.body.outcome).toBe('retry');
    expect(Number.isInteger(reply.body.delaySecs)).toBe(true);
    // attempts 1: min(3600, 2^1) * [0.5, 1) floored, at least 1.
    expect(reply.body.delaySecs).toBeGreaterThanOrEqual(1);
    expect(reply.body.delaySecs).toBeLessThanOrEqual(2);
    const stored = await row(job.id);
    expect(stored).toMatchObject({ status: 'queued', error: 'boom', lease_id: null });
    expect(Number(stored.secs_left)).toBeGreaterThan(reply.body.delaySecs - 1.5);
    expect(await jobEvents(service, job.id)).toEqual(['JobEnqueued', 'JobLeased', 'JobRetryScheduled']);
  });

  it('goes dead for a non-retryable failure: 200 {outcome:"dead"}', async () => {
    const job = await leaseOne(freshQueue());
    const reply = await worker(`/jobs/${job.id}/fail`, { leaseId: job.leaseId, error: 'bad input', retryable: false });
    expect(reply).toEqual({ status: 200, body: { outcome: 'dead' } });
    const view = await userClient(service, 'Viewer')('GET', `/jobs/${job.id}`);
    expect(view.body).toMatchObject({ status: 'dead', error: 'bad input' });
    expect(await jobEvents(service, job.id)).toEqual(['JobEnqueued', 'JobLeased', 'JobDead']);
  });

  it('goes dead once attempts reach maxAttempts', async () => {
    const queue = freshQueue();
    const id = await enqueue(queue, { maxAttempts: 2 });
    const first = await leaseOne(queue, 30, false);
    expect((await worker(`/jobs/${id}/fail`, { leaseId: first.leaseId, error: 'e1', retryable: true })).body.outcome).toBe('retry');
    await service.ctx.db.none('update svc_jobs set visible_at = now() where id = $1', [id]);
    const second = await leaseOne(queue, 30, false);
    expect(second.attempts).toBe(2);
    const reply = await worker(`/jobs/${id}/fail`, { leaseId: second.leaseId, error: 'e2', retryable: true });
    expect(reply.body).toEqual({ outcome: 'dead' });
    expect(await row(id)).toMatchObject({ status: 'dead', attempts: 2, error: 'e2' });
  });

  it('answers 409 for a stale lease and changes nothing (no-op)', async () => {
    const job = await leaseOne(freshQueue());
    const reply = await worker(`/jobs/${job.id}/fail`, { leaseId: 'stale', error: 'x', retryable: false });
    expect(reply).toEqual({ status: 409, body: { error: 'lease lost', code: 'CONFLICT' } });
    expect(await row(job.id)).toMatchObject({ status: 'leased', error: null, lease_id: job.leaseId });
    expect(await jobEvents(service, job.id)).toEqual(['JobEnqueued', 'JobLeased']);
  });

  it('answers 400 when error is not a string', async () => {
    const job = await leaseOne(freshQueue());
    expect((await worker(`/jobs/${job.id}/fail`, { leaseId: job.leaseId, error: 42, retryable: true })).status).toBe(400);
  });
});
