/**
 * Jobs, app plane: POST /jobs and GET /jobs/{id} against a running server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { startJobsService, call, jobEvents, userClient } from './helpers.ts';
import { TenantScope } from '../../runtime/tenancy/index.ts';

let service: TestService;

beforeAll(async () => {
  service = await startJobsService();
});
afterAll(async () => {
  await service?.close();
});

describe('POST /jobs', () => {
  it('returns 201 {id} and stores the defaults maxAttempts 5, priority 0', async () => {
    const user = userClient(service, 'Viewer');
    const created = await user('POST', '/jobs', { queue: 'email', kind: 'welcome', payload: { to: 'a@b.c' } });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body)).toEqual(['id']);
    expect(created.body.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    const row = await service.ctx.db.one('select * from svc_jobs where id = $1', [created.body.id]);
    expect(row).toMatchObject({ max_attempts: 5, priority: 0, status: 'queued', attempts: 0, created_by: 'user-Viewer' });
    expect(row.payload).toEqual({ to: 'a@b.c' });
  });

  it('appends a JobEnqueued event for the new job', async () => {
    const user = userClient(service, 'Viewer');
    const { body } = await user('POST', '/jobs', { queue: 'email', kind: 'welcome' });
    expect(await jobEvents(service, body.id)).toEqual(['JobEnqueued']);
  });

  it.each([
    [{ queue: '', kind: 'k' }],
    [{ queue: '   ', kind: 'k' }],
    [{ queue: 'q', kind: ' ' }],
    [{ queue: 'q' }],
    [{ kind: 'k' }],
    [{ queue: 7, kind: 'k' }],
  ])('answers 400 for a blank or missing queue/kind: %j', async (body) => {
    const reply = await userClient(service, 'Viewer')('POST', '/jobs', body);
    expect(reply.status).toBe(400);
    expect(typeof reply.body.error).toBe('string');
  });

  it('answers 400, not 500, for bad maxAttempts, priority or body', async () => {
    const user = userClient(service, 'Viewer');
    expect((await user('POST', '/jobs', { queue: 'q', kind: 'k', maxAttempts: 0 })).status).toBe(400);
    expect((await user('POST', '/jobs', { queue: 'q', kind: 'k', maxAttempts: 'x' })).status).toBe(400);
    expect((await user('POST', '/jobs', { queue: 'q', kind: 'k', priority: 1.5 })).status).toBe(400);
    expect((await user('POST', '/jobs', [1, 2])).status).toBe(400);
  });

  it('answers 401 without a bearer token or with an invalid one', async () => {
    expect((await call(service.url, 'POST', '/jobs', { body: { queue: 'q', kind: 'k' } })).status).toBe(401);
    const bad = await call(service.url, 'POST', '/jobs', { body: { queue: 'q', kind: 'k' }, headers: { authorization: 'Bearer nope' } });
    expect(bad.status).toBe(401);
  });

  it('stamps the job with the caller tenant (bound user, or X-Tenant-ID of a tenant-less Admin)', async () => {
    const bound = await userClient(service, 'Viewer', 'u1', 't-one')('POST', '/jobs', { queue: 'q', kind: 'k' });
    const platform = await userClient(service, 'Admin', 'u2')('POST', '/jobs', { queue: 'q', kind: 'k' }, { 'x-tenant-id': 't-two' });
    const tenant = async (id: string) => (await service.ctx.db.one('select tenant_id from svc_jobs where id = $1', [id])).tenant_id;
    expect(await tenant(bound.body.id)).toBe('t-one');
    expect(await tenant(platform.body.id)).toBe('t-two');
  });

  it('refuses X-Tenant-ID from a tenant-less non-Admin (403) and from a user bound to another tenant', async () => {
    const viewer = userClient(service, 'Viewer', 'tenantless-viewer');
    const named = await viewer('POST', '/jobs', { queue: 'q', kind: 'k' }, { 'x-tenant-id': 't-one' });
    expect(named.status).toBe(403);
    expect(named.body.code).toBe('FORBIDDEN');
    const { body } = await userClient(service, 'Viewer', 'u1', 't-one')('POST', '/jobs', { queue: 'q', kind: 'k' });
    expect((await viewer('GET', `/jobs/${body.id}`, undefined, { 'x-tenant-id': 't-one' })).status).toBe(403);
    expect((await userClient(service, 'Viewer', 'u3', 't-three')('GET', `/jobs/${body.id}`, undefined, { 'x-tenant-id': 't-one' })).status).toBe(403);
  });

  it('keeps a tenant\'s jobs invisible to tenant-less users that name no tenant (global scope)', async () => {
    const { body } = await userClient(service, 'Viewer', 'u1', 't-one')('POST', '/jobs', { queue: 'q', kind: 'k' });
    expect((await userClient(service, 'Viewer', 'tenantless-viewer')('GET', `/jobs/${body.id}`)).status).toBe(404);
    expect((await userClient(service, 'Admin', 'tenantless-admin')('GET', `/jobs/${body.id}`)).status).toBe(404);
    const entered = await userClient(service, 'Admin', 'tenantless-admin')('GET', `/jobs/${body.id}`, undefined, { 'x-tenant-id': 't-one' });
    expect(entered.status).toBe(200);
  });

  it('returns the existing id for a repeated idempotencyKey in the same queue, a new one in another queue', async () => {
    const user = userClient(service, 'Viewer');
    const first = await user('POST', '/jobs', { queue: 'idem', kind: 'k', idempotencyKey: 'key-1' });
    const again = await user('POST', '/jobs', { queue: 'idem', kind: 'other', idempotencyKey: 'key-1' });
    const otherQueue = await user('POST', '/jobs', { queue: 'idem-2', kind: 'k', idempotencyKey: 'key-1' });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(otherQueue.body.id).not.toBe(first.body.id);
    expect(await jobEvents(service, first.body.id)).toEqual(['JobEnqueued']);
  });

  it('keeps one job for concurrent repeats of an idempotencyKey', async () => {
    const user = userClient(service, 'Viewer');
    const replies = await Promise.all(Array.from({ length: 12 }, () =>
      user('POST', '/jobs', { queue: 'race', kind: 'k', idempotencyKey: 'same' })));
    expect(replies.map((r) => r.status)).toEqual(Array(12).fill(201));
    expect(new Set(replies.map((r) => r.body.id)).size).toBe(1);
    const { count } = await service.ctx.db.one(`select count(*) from svc_jobs where queue = 'race'`);
    expect(count).toBe(1);
  });

  it('scopes idempotency keys per tenant: another tenant never receives the first tenant\'s id', async () => {
    const a = await userClient(service, 'Viewer', 'ua', 'ten-a')('POST', '/jobs', { queue: 'iq', kind: 'k', idempotencyKey: 'k1' });
    const b = await userClient(service, 'Viewer', 'ub', 'ten-b')('POST', '/jobs', { queue: 'iq', kind: 'k', idempotencyKey: 'k1' });
    expect(b.body.id).not.toBe(a.body.id);
  });
});

describe('GET /jobs/{id}', () => {
  it('returns 200 with exactly the Job fields', async () => {
    const user = userClient(service, 'Viewer');
    const { body } = await user('POST', '/jobs', { queue: 'q', kind: 'k', maxAttempts: 3, priority: 9 });
    const reply = await user('GET', `/jobs/${body.id}`);
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({
      id: body.id, queue: 'q', kind: 'k', status: 'queued', attempts: 0, maxAttempts: 3, result: null, error: null,
    });
  });

  it('answers 404 for an unknown job', async () => {
    const reply = await userClient(service, 'Viewer')('GET', '/jobs/01J0000000000000000000000X');
    expect(reply.status).toBe(404);
    expect(reply.body.error).toBeTypeOf('string');
  });

  it('answers 404 when a tenant-bound user asks for another tenant\'s job', async () => {
    const { body } = await userClient(service, 'Viewer', 'owner', 'tenant-x')('POST', '/jobs', { queue: 'q', kind: 'k' });
    expect((await userClient(service, 'Viewer', 'owner', 'tenant-x')('GET', `/jobs/${body.id}`)).status).toBe(200);
    expect((await userClient(service, 'Admin', 'other', 'tenant-y')('GET', `/jobs/${body.id}`)).status).toBe(404);
    // A tenant-less user acts in the global scope: another tenant's job does not exist for it.
    expect((await userClient(service, 'Viewer', 'platform')('GET', `/jobs/${body.id}`)).status).toBe(404);
  });

  it('answers 401 without auth', async () => {
    expect((await call(service.url, 'GET', '/jobs/anything')).status).toBe(401);
  });

  it('enqueue through ctx.services.jobs validates like the REST route', async () => {
    const jobs = service.ctx.services.jobs;
    await expect(jobs.enqueue({ queue: ' ', kind: 'k' }, { actorId: null, tenantId: null })).rejects.toMatchObject({ status: 400 });
    const { id } = await jobs.enqueue({ queue: 'internal', kind: 'k' }, { actorId: null, tenantId: 't9' });
    expect(await jobs.get(id, TenantScope.of('t9'))).toMatchObject({ id, status: 'queued', maxAttempts: 5 });
    expect(await jobs.get(id, TenantScope.of('other'))).toBeNull();
  });
});

describe('POST /jobs under the tenant feed cursor (SVC_FEED_CURSOR=tenant)', () => {
  let tenantMode: TestService;
  beforeAll(async () => {
    tenantMode = await startJobsService({ env: { SVC_FEED_CURSOR: 'tenant' } });
  });
  afterAll(async () => {
    await tenantMode?.close();
  });

  it('writes the job, its JobEnqueued event stamped with the tenant\'s next position, and its audit entry, per tenant', async () => {
    const ids: Array<[string | null, string]> = [];
    for (const tenant of ['tenant-a', 'tenant-a', null]) {
      const reply = await userClient(tenantMode, 'Viewer', 'enqueuer', tenant)('POST', '/jobs', { queue: 'q', kind: 'k', payload: { n: 1 } });
      expect(reply.status).toBe(201);
      ids.push([tenant, reply.body.id]);
    }
    const events = await tenantMode.ctx.db.any<{ stream_id: string; tenant_id: string; version: number; event_type: string; tenant_seq: string | null; data: unknown }>(
      `select stream_id, tenant_id, version, event_type, tenant_seq::text, data from svc_events where stream_type = 'Job' and stream_id = any($1) order by tenant_id, tenant_seq`,
      [ids.map(([, id]) => id)]);
    expect(events.map((e) => [e.tenant_id, e.event_type, e.version])).toEqual([['', 'JobEnqueued', 1], ['tenant-a', 'JobEnqueued', 1], ['tenant-a', 'JobEnqueued', 1]]);
    const seqs = events.filter((e) => e.tenant_id === 'tenant-a').map((e) => Number(e.tenant_seq));
    expect(seqs[1]).toBe(seqs[0] + 1);
    expect(events[0].tenant_seq).not.toBeNull();
    expect(events[0].data).toEqual({ queue: 'q', kind: 'k', priority: 0, maxAttempts: 5 });
    const audited = await tenantMode.ctx.db.any<{ entity_id: string; tenant_id: string; action: string }>(
      `select entity_id, tenant_id, action from svc_audit where entity_type = 'Job' and entity_id = any($1)`, [ids.map(([, id]) => id)]);
    expect(audited.map((a) => [a.entity_id, a.tenant_id, a.action]).sort()).toEqual(
      ids.map(([tenant, id]) => [id, tenant ?? '', 'job.enqueue']).sort());
  });
});
