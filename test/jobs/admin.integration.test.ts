/**
 * Jobs, admin plane: worker tokens, stats, recent jobs; 401 without auth and
 * 403 for non-admins on every route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { call, mintWorker, startJobsService, userClient, workerClient } from './helpers.ts';

let service: TestService;
let admin: ReturnType<typeof userClient>;

beforeAll(async () => {
  service = await startJobsService();
  admin = userClient(service, 'Admin', 'root');
});
afterAll(async () => {
  await service?.close();
});

describe('admin plane access', () => {
  const routes: Array<[string, string, unknown?]> = [
    ['POST', '/jobs/workers', { name: 'w', queues: ['*'] }],
    ['GET', '/jobs/workers'],
    ['DELETE', '/jobs/workers/01J0000000000000000000000X'],
    ['GET', '/jobs/stats'],
    ['GET', '/jobs/recent'],
  ];

  it.each(routes)('%s %s answers 401 without auth and 403 for a non-admin', async (method, path, body) => {
    const anonymous = await call(service.url, method, path, { body });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBeTypeOf('string');
    for (const role of ['Manager', 'Viewer'] as const) {
      const reply = await userClient(service, role)(method, path, body);
      expect(reply.status).toBe(403);
      expect(reply.body.error).toBeTypeOf('string');
    }
  });
});

describe('worker tokens', () => {
  it('POST /jobs/workers returns 201 {id, token, queues}; the token has the wkr_ prefix and only its SHA-256 is stored', async () => {
    const reply = await admin('POST', '/jobs/workers', { name: 'mailer', queues: ['email', 'sms'] });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.body).sort()).toEqual(['id', 'queues', 'token']);
    expect(reply.body.token).toMatch(/^wkr_[A-Za-z0-9_-]{40,}$/);
    expect(reply.body.queues).toEqual(['email', 'sms']);
    const stored = await service.ctx.db.one('select * from svc_worker_tokens where id = $1', [reply.body.id]);
    const { createHash } = await import('node:crypto');
    expect(stored.token_hash).toBe(createHash('sha256').update(reply.body.token).digest('hex'));
    expect(JSON.stringify(stored)).not.toContain(reply.body.token);
  });

  it('answers 400 for a blank name or empty queues', async () => {
    expect((await admin('POST', '/jobs/workers', { name: ' ', queues: ['q'] })).status).toBe(400);
    expect((await admin('POST', '/jobs/workers', { name: 'w', queues: [] })).status).toBe(400);
    expect((await admin('POST', '/jobs/workers', { name: 'w', queues: 'q' })).status).toBe(400);
  });

  it('GET /jobs/workers lists {id,name,queues,isRevoked,createdAt}, never the token or its hash', async () => {
    const minted = await admin('POST', '/jobs/workers', { name: 'lister', queues: ['*'] });
    const reply = await admin('GET', '/jobs/workers');
    expect(reply.status).toBe(200);
    const entry = reply.body.workers.find((w: { id: string }) => w.id === minted.body.id);
    expect(Object.keys(entry).sort()).toEqual(['createdAt', 'id', 'isRevoked', 'name', 'queues']);
    expect(entry).toMatchObject({ name: 'lister', queues: ['*'], isRevoked: false });
    expect(new Date(entry.createdAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
    const text = JSON.stringify(reply.body);
    expect(text).not.toContain(minted.body.token);
    expect(text).not.toMatch(/[0-9a-f]{64}/);
  });

  it('DELETE /jobs/workers/{id} answers 204, then 404 when already revoked; unknown is 404; revocation holds at once', async () => {
    const minted = await mintWorker(service, ['q']);
    const lease = () => workerClient(service, minted.token)('/jobs/lease', { queues: ['q'], capacity: 1, visibilitySecs: 30 });
    expect((await lease()).status).toBe(200);
    expect((await admin('DELETE', `/jobs/workers/${minted.id}`)).status).toBe(204);
    expect((await lease()).status).toBe(401);
    expect((await admin('DELETE', `/jobs/workers/${minted.id}`)).status).toBe(404);
    expect((await admin('DELETE', '/jobs/workers/01J0000000000000000000000X')).status).toBe(404);
    const listed = (await admin('GET', '/jobs/workers')).body.workers.find((w: { id: string }) => w.id === minted.id);
    expect(listed.isRevoked).toBe(true);
  });

  it('a tenant-bound admin lists and revokes only its tenant\'s tokens', async () => {
    const tenantAdmin = userClient(service, 'Admin', 'ta', 'tenant-a');
    const own = await tenantAdmin('POST', '/jobs/workers', { name: 'a-worker', queues: ['q'] });
    const platform = await admin('POST', '/jobs/workers', { name: 'platform-worker', queues: ['q'] });
    const listed = (await tenantAdmin('GET', '/jobs/workers')).body.workers.map((w: { id: string }) => w.id);
    expect(listed).toEqual([own.body.id]);
    expect((await tenantAdmin('DELETE', `/jobs/workers/${platform.body.id}`)).status).toBe(404);
    expect((await tenantAdmin('DELETE', `/jobs/workers/${own.body.id}`)).status).toBe(204);
  });
});

describe('GET /jobs/stats', () => {
  it('counts by status and by queue in one snapshot, with the oldest queued age', async () => {
    const user = userClient(service, 'Viewer', 'u', 'stats-t');
    const statsAdmin = userClient(service, 'Admin', 'sa', 'stats-t');
    for (let i = 0; i < 3; i++) await user('POST', '/jobs', { queue: 'alpha', kind: 'k' });
    await user('POST', '/jobs', { queue: 'beta', kind: 'k' });
    await service.ctx.db.none(`update svc_jobs set created_at = now() - interval '90 seconds' where tenant_id = 'stats-t' and queue = 'beta'`);
    const token = (await statsAdmin('POST', '/jobs/workers', { name: 'w', queues: ['alpha'] })).body.token;
    const leased = await workerClient(service, token)('/jobs/lease', { queues: ['alpha'], capacity: 1, visibilitySecs: 30 });
    const [job] = leased.body.jobs;
    await workerClient(service, token)(`/jobs/${job.id}/fail`, { leaseId: job.leaseId, error: 'x', retryable: false });

    const reply = await statsAdmin('GET', '/jobs/stats');
    expect(reply.status).toBe(200);
    expect(reply.body.byStatus).toEqual({ queued: 3, leased: 0, succeeded: 0, dead: 1, failed: 0 });
    expect(reply.body.byQueue).toEqual([
      { queue: 'alpha', status: 'dead', count: 1 },
      { queue: 'alpha', status: 'queued', count: 2 },
      { queue: 'beta', status: 'queued', count: 1 },
    ]);
    expect(reply.body.oldestQueuedSeconds).toBeGreaterThanOrEqual(89);
    expect(reply.body.oldestQueuedSeconds).toBeLessThan(200);
  });

  it('reports zeros for a tenant without jobs', async () => {
    const reply = await userClient(service, 'Admin', 'empty', 'no-jobs-tenant')('GET', '/jobs/stats');
    expect(reply.body).toEqual({
      byStatus: { queued: 0, leased: 0, succeeded: 0, dead: 0, failed: 0 }, byQueue: [], oldestQueuedSeconds: 0,
    });
  });
});

describe('GET /jobs/recent', () => {
  const tenantAdmin = () => userClient(service, 'Admin', 'ra', 'recent-t');

  it('lists newest first without payload or result, filters by queue and status, pages with limit and offset', async () => {
    const user = userClient(service, 'Viewer', 'u', 'recent-t');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await user('POST', '/jobs', { queue: i % 2 ? 'odd' : 'even', kind: 'k', payload: { secret: i } })).body.id);
    const all = await tenantAdmin()('GET', '/jobs/recent');
    expect(all.status).toBe(200);
    expect(all.body.jobs.map((j: { id: string }) => j.id)).toEqual([...ids].reverse());
    expect(Object.keys(all.body.jobs[0]).sort()).toEqual(
      ['attempts', 'createdAt', 'error', 'id', 'kind', 'maxAttempts', 'queue', 'status', 'updatedAt'],
    );
    const odd = await tenantAdmin()('GET', '/jobs/recent?queue=odd');
    expect(odd.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[3], ids[1]]);
    expect((await tenantAdmin()('GET', '/jobs/recent?status=succeeded')).body.jobs).toEqual([]);
    expect((await tenantAdmin()('GET', '/jobs/recent?status=queued&limit=2&offset=1')).body.jobs.map((j: { id: string }) => j.id))
      .toEqual([ids[3], ids[2]]);
  });

  it('clamps limit to 200 and answers 400 for a bad status or limit', async () => {
    await service.ctx.services.jobs.enqueueMany(Array.from({ length: 230 }, () => ({ queue: 'bulk', kind: 'k' })),
      { actorId: null, tenantId: 'recent-bulk' });
    const bulkAdmin = userClient(service, 'Admin', 'rb', 'recent-bulk');
    expect((await bulkAdmin('GET', '/jobs/recent?limit=1000')).body.jobs).toHaveLength(200);
    expect((await bulkAdmin('GET', '/jobs/recent')).body.jobs.length).toBeLessThanOrEqual(200);
    expect((await bulkAdmin('GET', '/jobs/recent?status=weird')).status).toBe(400);
    expect((await bulkAdmin('GET', '/jobs/recent?limit=abc')).status).toBe(400);
  });

  it('a tenant-bound admin sees only its tenant\'s jobs; a platform admin enters a tenant with X-Tenant-ID', async () => {
    const other = await userClient(service, 'Viewer', 'o', 'other-t')('POST', '/jobs', { queue: 'x', kind: 'k' });
    const mine = (await tenantAdmin()('GET', '/jobs/recent?limit=200')).body.jobs.map((j: { id: string }) => j.id);
    expect(mine).not.toContain(other.body.id);
    const narrowed = await admin('GET', '/jobs/recent', undefined, { 'x-tenant-id': 'other-t' });
    expect(narrowed.body.jobs.map((j: { id: string }) => j.id)).toEqual([other.body.id]);
    // Without the header the platform admin acts in the global scope: no request spans scopes.
    const global = (await admin('GET', '/jobs/recent?limit=200')).body.jobs.map((j: { id: string }) => j.id);
    expect(global).not.toContain(other.body.id);
    const stats = await admin('GET', '/jobs/stats');
    expect(stats.body.byQueue.find((q: { queue: string }) => q.queue === 'x')).toBeUndefined();
    const viewerNaming = await userClient(service, 'Viewer', 'v')('GET', '/jobs/o', undefined, { 'x-tenant-id': 'other-t' });
    expect(viewerNaming.status).toBe(403);
  });
});
