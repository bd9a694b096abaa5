/**
 * Job progress on realtime channel `job:{id}`: published by POST
 * /jobs/{id}/progress to subscribers on every instance, never to the event
 * log; only the enqueuer or an Admin may subscribe.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { TestService } from '../helpers/service.ts';
import { jobEvents, mintWorker, startJobsService, userClient, workerClient } from './helpers.ts';

let first: TestService;
let second: TestService;
let worker: ReturnType<typeof workerClient>;

beforeAll(async () => {
  first = await startJobsService();
  second = await startJobsService({ database: first.database });
  worker = workerClient(first, (await mintWorker(first, ['*'])).token);
});
afterAll(async () => {
  await second?.close();
  await first?.close();
});

interface Frame { op: string; channel?: string; data?: unknown; code?: string }

async function connect(service: TestService, userId: string, role: 'Admin' | 'Viewer') {
  const token = await service.token({ role, userId });
  const ws = new WebSocket(`${service.url.replace('http', 'ws')}/realtime/ws?token=${token}`);
  const frames: Frame[] = [];
  ws.on('message', (raw) => frames.push(JSON.parse(raw.toString())));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const next = async (op: string): Promise<Frame> => {
    for (let waited = 0; waited < 5000; waited += 20) {
      const at = frames.findIndex((f) => f.op === op);
      if (at >= 0) return frames.splice(at, 1)[0];
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no ${op} frame; got ${JSON.stringify(frames)}`);
  };
  const close = () => new Promise((resolve) => {
    ws.once('close', resolve);
    ws.close();
  });
  return { ws, frames, next, close, send: (frame: object) => ws.send(JSON.stringify(frame)) };
}

async function enqueueAndLease(userId: string) {
  const queue = `progress-${userId}-${Date.now()}`;
  const { body } = await userClient(first, 'Viewer', userId)('POST', '/jobs', { queue, kind: 'k' });
  const [job] = (await worker('/jobs/lease', { queues: [queue], capacity: 1, visibilitySecs: 30 })).body.jobs;
  return { id: body.id as string, leaseId: job.leaseId as string };
}

describe('job progress over realtime', () => {
  it('delivers {jobId, percent, message, data} to the enqueuer, also through another instance, and logs no event', async () => {
    const { id, leaseId } = await enqueueAndLease('owner');
    const here = await connect(first, 'owner', 'Viewer');
    const there = await connect(second, 'owner', 'Viewer');
    for (const client of [here, there]) {
      client.send({ op: 'subscribe', channel: `job:${id}` });
      expect(await client.next('subscribed')).toMatchObject({ channel: `job:${id}` });
    }
    const reply = await worker(`/jobs/${id}/progress`, { leaseId, percent: 42, message: 'warming up', data: { step: 2 } });
    expect(reply.status).toBe(204);
    const expected = { op: 'message', channel: `job:${id}`, data: { jobId: id, percent: 42, message: 'warming up', data: { step: 2 } } };
    expect(await here.next('message')).toMatchObject(expected);
    expect(await there.next('message')).toMatchObject(expected);
    expect(await jobEvents(first, id)).toEqual(['JobEnqueued', 'JobLeased']);
    await Promise.all([here.close(), there.close()]);
  });

  it('lets an Admin subscribe, refuses another user, and refuses publishing on job channels', async () => {
    const { id, leaseId } = await enqueueAndLease('owner2');
    const stranger = await connect(first, 'stranger', 'Viewer');
    stranger.send({ op: 'subscribe', channel: `job:${id}` });
    expect(await stranger.next('error')).toMatchObject({ code: 'forbidden' });
    const admin = await connect(first, 'root', 'Admin');
    admin.send({ op: 'subscribe', channel: `job:${id}` });
    await admin.next('subscribed');
    const owner = await connect(first, 'owner2', 'Viewer');
    owner.send({ op: 'publish', channel: `job:${id}`, data: { percent: 100 } });
    expect((await owner.next('error')).code).toBeTypeOf('string');
    await worker(`/jobs/${id}/progress`, { leaseId, percent: 10, message: 'm', data: null });
    expect(await admin.next('message')).toMatchObject({ data: { jobId: id, percent: 10 } });
    expect(stranger.frames.filter((f) => f.op === 'message')).toEqual([]);
    await Promise.all([stranger.close(), admin.close(), owner.close()]);
  });

  it('publishes nothing for a stale lease (409)', async () => {
    const { id, leaseId } = await enqueueAndLease('owner3');
    const owner = await connect(first, 'owner3', 'Viewer');
    owner.send({ op: 'subscribe', channel: `job:${id}` });
    await owner.next('subscribed');
    expect((await worker(`/jobs/${id}/progress`, { leaseId: 'stale', percent: 5, message: 'x', data: null })).status).toBe(409);
    // A barrier instead of a pause: the holder's own report goes out on the same
    // channel after it, so a published stale report would arrive first.
    expect((await worker(`/jobs/${id}/progress`, { leaseId, percent: 6, message: 'y', data: null })).status).toBe(204);
    expect(await owner.next('message')).toMatchObject({ data: { jobId: id, percent: 6, message: 'y' } });
    expect(owner.frames.filter((f) => f.op === 'message')).toEqual([]);
    await owner.close();
  });
});
