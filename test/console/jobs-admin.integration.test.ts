/**
 * The jobs admin routes of CONTRACT section 16 over HTTP: search by queue,
 * status, kind and payload; retry a dead job, cancel a queued one; bulk by
 * filter with dryRun answering the matched count first; Admin only; each
 * tenant's jobs only; every change audited and in the job's history.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryOnce } from '../helpers/db.ts';
import type { TestService } from '../helpers/service.ts';
import { call, mintWorker, startJobsService, userClient, workerClient } from '../jobs/helpers.ts';

let service: TestService;
let admin: ReturnType<typeof userClient>;
let worker: ReturnType<typeof workerClient>;

beforeAll(async () => {
  service = await startJobsService();
  admin = userClient(service, 'Admin', 'root');
  worker = workerClient(service, (await mintWorker(service, ['*'])).token);
});
afterAll(async () => {
  await service?.close();
});

/** Enqueues a job as `as` and, with `dead`, leases and fails it for good. */
async function job(as: ReturnType<typeof userClient>, queue: string, payload: unknown, dead: boolean): Promise<string> {
  const enqueued = await as('POST', '/jobs', { queue, kind: 'send', payload, maxAttempts: 1 });
  expect(enqueued.status).toBe(201);
  const id = enqueued.body.id as string;
  if (!dead) return id;
  const leased = await worker('/jobs/lease', { queues: [queue], capacity: 10, visibilitySecs: 60 });
  const mine = leased.body.jobs.find((j: { id: string }) => j.id === id);
  expect(mine).toBeTruthy();
  expect((await worker(`/jobs/${id}/fail`, { leaseId: mine.leaseId, error: 'smtp refused', retryable: false })).body).toEqual({ outcome: 'dead' });
  return id;
}

describe('jobs admin routes', () => {
  it('answer 401 without a token and 403 to every role but Admin', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/jobs/search'], ['GET', '/jobs/01J0000000000000000000000X/inspect'],
      ['POST', '/jobs/01J0000000000000000000000X/retry'], ['POST', '/jobs/01J0000000000000000000000X/cancel'],
      ['POST', '/jobs/bulk', { action: 'retry', dryRun: true }],
    ];
    for (const [method, path, body] of routes) {
      expect((await call(service.url, method, path, { body })).status, `${method} ${path}`).toBe(401);
      for (const role of ['Manager', 'Viewer'] as const) {
        expect((await userClient(service, role)(method, path, body)).status, `${role} ${method} ${path}`).toBe(403);
      }
    }
  });

  it('search filters by queue, status, kind and a payload field, newest first with a keyset cursor', async () => {
    const a = await job(admin, 'search-q', { customer: { id: 42 } }, true);
    const b = await job(admin, 'search-q', { customer: { id: 7 } }, false);
    const c = await job(admin, 'search-q', { customer: { id: 42 }, extra: true }, false);
    const all = await admin('GET', '/jobs/search?queue=search-q');
    expect(all.status).toBe(200);
    expect(all.body.jobs.map((j: { id: string }) => j.id)).toEqual([c, b, a]);
    expect(all.body.jobs[0]).toMatchObject({ queue: 'search-q', kind: 'send', status: 'queued', payload: { customer: { id: 42 }, extra: true } });
    const byPayload = await admin('GET', `/jobs/search?queue=search-q&payload=${encodeURIComponent('{"customer":{"id":42}}')}`);
    expect(byPayload.body.jobs.map((j: { id: string }) => j.id)).toEqual([c, a]);
    const dead = await admin('GET', '/jobs/search?queue=search-q&status=dead&kind=send');
    expect(dead.body.jobs.map((j: { id: string }) => j.id)).toEqual([a]);
    expect(dead.body.jobs[0].error).toBe('smtp refused');
    const first = await admin('GET', '/jobs/search?queue=search-q&limit=2');
    expect(first.body.jobs).toHaveLength(2);
    const second = await admin('GET', `/jobs/search?queue=search-q&limit=2&after=${first.body.nextCursor}`);
    expect(second.body).toMatchObject({ jobs: [{ id: a }], nextCursor: null });
    // The payload filter has its index (runtime/jobs/migrations/0006_payload_search.sql), built and valid, and the
    // planner can serve the filter's containment with it.
    const [index] = await queryOnce<{ valid: boolean }>(service.database.url,
      `select indisvalid as valid from pg_index where indexrelid = 'svc_jobs_payload'::regclass`);
    expect(index.valid).toBe(true);
    const client = new pg.Client({ connectionString: service.database.url });
    await client.connect();
    try {
      await client.query('set enable_seqscan = off'); // a table this small is read whole otherwise
      const plan = await client.query(`explain select id from svc_jobs where payload @> '{"customer":{"id":42}}'::jsonb`);
      expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toContain('svc_jobs_payload');
    } finally {
      await client.end();
    }
    for (const bad of ['status=lost', 'payload=%7Bnot-json', 'payload=%5B1%5D']) {
      const reply = await admin('GET', `/jobs/search?${bad}`);
      expect(reply.status, bad).toBe(400);
      expect(reply.body.field).toBeTypeOf('string');
    }
  });

  it('retries a dead job (queued again with its full maxAttempts) and cancels a queued one; the wrong status is 409', async () => {
    const dead = await job(admin, 'one-q', { n: 1 }, true);
    const queued = await job(admin, 'one-q', { n: 2 }, false);
    const retried = await admin('POST', `/jobs/${dead}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id: dead, status: 'queued', attempts: 0, maxAttempts: 1 });
    const cancelled = await admin('POST', `/jobs/${queued}/cancel`);
    expect(cancelled.body).toMatchObject({ id: queued, status: 'dead', error: 'cancelled' });
    expect((await admin('POST', `/jobs/${dead}/retry`)).status).toBe(409);
    expect((await admin('POST', `/jobs/${queued}/cancel`)).status).toBe(409);
    expect((await admin('POST', '/jobs/01J0000000000000000000000X/retry')).status).toBe(404);
    // The job's history names who did it.
    const history = await admin('POST', '/graphql', {
      query: 'query($id: ID!) { recordHistory(model: "Job", id: $id) { eventType actorId } }', variables: { id: queued },
    });
    expect(history.body.data.recordHistory.at(-1)).toEqual({ eventType: 'JobDead', actorId: 'root' });
  });

  it('bulk: dryRun answers the matched count and changes nothing; then the same filter changes exactly those', async () => {
    for (let i = 0; i < 3; i++) await job(admin, 'bulk-q', { batch: 'b1', i }, false);
    await job(admin, 'bulk-q', { batch: 'b2' }, false);
    const filter = { queue: 'bulk-q', payload: { batch: 'b1' } };
    const preview = await admin('POST', '/jobs/bulk', { filter, action: 'cancel', dryRun: true });
    expect(preview).toEqual({ status: 200, body: { matched: 3 } });
    expect((await admin('GET', '/jobs/search?queue=bulk-q&status=queued')).body.jobs).toHaveLength(4);
    const done = await admin('POST', '/jobs/bulk', { filter, action: 'cancel' });
    expect(done).toEqual({ status: 200, body: { changed: 3 } });
    expect((await admin('GET', '/jobs/search?queue=bulk-q&status=queued')).body.jobs).toHaveLength(1);
    // Retry applies to the dead ones only: the three cancelled jobs.
    expect((await admin('POST', '/jobs/bulk', { filter: { queue: 'bulk-q' }, action: 'retry', dryRun: true })).body).toEqual({ matched: 3 });
    expect((await admin('POST', '/jobs/bulk', { filter: { queue: 'bulk-q' }, action: 'retry', dryRun: false })).body).toEqual({ changed: 3 });
    expect((await admin('GET', '/jobs/search?queue=bulk-q&status=queued')).body.jobs).toHaveLength(4);
    for (const bad of [{ action: 'delete' }, { action: 'retry', filter: { color: 'red' } }, { action: 'retry', dryRun: 'yes' },
      { action: 'retry', filter: { status: 'lost' } }, { action: 'retry', filter: { payload: 3 } }]) {
      const reply = await admin('POST', '/jobs/bulk', bad);
      expect(reply.status, JSON.stringify(bad)).toBe(400);
      expect(reply.body.code).toBe('VALIDATION_ERROR');
    }
  });

  it('keeps to the tenant: a tenant admin sees, counts and changes its own jobs only; the operator acts in the tenant it names', async () => {
    const t1 = userClient(service, 'Admin', 'admin-t1', 't1');
    const t2 = userClient(service, 'Admin', 'admin-t2', 't2');
    const own = await job(t1, 'tenant-q', { who: 't1' }, false);
    const other = await job(t2, 'tenant-q', { who: 't2' }, false);
    expect((await t1('GET', '/jobs/search?queue=tenant-q')).body.jobs.map((j: { id: string }) => j.id)).toEqual([own]);
    expect((await t1('GET', `/jobs/${other}/inspect`)).status).toBe(404);
    expect((await t1('POST', `/jobs/${other}/cancel`)).status).toBe(404);
    expect((await t1('POST', '/jobs/bulk', { filter: { queue: 'tenant-q' }, action: 'cancel', dryRun: true })).body).toEqual({ matched: 1 });
    expect((await t1('POST', '/jobs/bulk', { filter: { queue: 'tenant-q' }, action: 'cancel' })).body).toEqual({ changed: 1 });
    expect((await t2('GET', `/jobs/${other}/inspect`)).body.status).toBe('queued');
    // The platform operator: the global scope by default, a tenant by X-Tenant-ID.
    expect((await admin('GET', '/jobs/search?queue=tenant-q')).body.jobs).toEqual([]);
    const inT2 = await admin('GET', '/jobs/search?queue=tenant-q', undefined, { 'x-tenant-id': 't2' });
    expect(inT2.body.jobs.map((j: { id: string }) => j.id)).toEqual([other]);
    expect((await t1('GET', '/jobs/search', undefined, { 'x-tenant-id': 't2' })).status).toBe(403);
  });

  it('writes an audit entry per change: one per job retried or cancelled, one per bulk batch naming the jobs', async () => {
    const id = await job(admin, 'audit-q', { a: 1 }, true);
    await admin('POST', `/jobs/${id}/retry`);
    const one = await admin('GET', `/audit/logs?action=job.retry&entityType=Job&entityId=${id}`);
    expect(one.body.items).toHaveLength(1);
    expect(one.body.items[0]).toMatchObject({ action: 'job.retry', outcome: 'success', actor: { kind: 'user', id: 'root', role: 'Admin' }, entityId: id });
    const queued = [await job(admin, 'audit-q', { a: 2 }, false), await job(admin, 'audit-q', { a: 3 }, false)];
    await admin('POST', '/jobs/bulk', { filter: { queue: 'audit-q', payload: { a: 2 } }, action: 'cancel' });
    const bulk = await admin('GET', '/audit/logs?action=job.cancel');
    const entry = bulk.body.items.find((e: { changes: { jobIds?: string[] } }) => e.changes?.jobIds);
    expect(entry.changes).toEqual({ filter: { queue: 'audit-q', payload: { a: 2 } }, jobIds: [queued[0]] });
    const denied = await userClient(service, 'Viewer', 'viewer-1')('POST', `/jobs/${queued[1]}/cancel`);
    expect(denied.status).toBe(403);
    const deniedEntries = await admin('GET', '/audit/logs?outcome=denied&actorId=viewer-1');
    expect(deniedEntries.body.items.length).toBeGreaterThan(0);
  });
});
