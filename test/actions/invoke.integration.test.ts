/**
 * `POST /api/actions/{name}` (CONTRACT section 11): 401 without a token, 404
 * for an unknown action, 403 when `access` refuses, 400 naming the field,
 * 202 `{jobId, status}` with the job in the caller's tenant, an idempotency
 * key scoped to the caller, `wait` answered from the change feed (200 with
 * the result, or the error of a dead job; 202 when time runs out), audited
 * as `action.invoke`. A real worker process (the SDK) runs the jobs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { actionJobs, rest, startActionsService, startWorkerProcess, userOf, workerToken, type User, type WorkerProcess } from './helpers.ts';

let service: TestService;
let sales: User;
let viewer: User;
let admin: User;
let worker: WorkerProcess | null = null;

beforeAll(async () => {
  service = await startActionsService();
  sales = await userOf(service, 'Sales', 'sam', 'acme');
  viewer = await userOf(service, 'Viewer', 'vic', 'acme');
  admin = await userOf(service, 'Admin', 'root');
});
afterAll(async () => {
  await worker?.stop();
  await service?.close();
});

const invoke = (name: string, body: unknown, user: User | null, headers: Record<string, string> = {}) =>
  rest(service.url, 'POST', `/api/actions/${name}`, { body, headers: { ...(user ? { authorization: `Bearer ${user.token}` } : {}), ...headers } });

describe('POST /api/actions/{name}', () => {
  it('401 without a valid token, before anything else (even an unknown action)', async () => {
    expect((await invoke('sendDigest', { input: { to: 'a' } }, null)).status).toBe(401);
    expect((await invoke('nope', {}, null)).status).toBe(401);
    expect((await invoke('sendDigest', { input: { to: 'a' } }, null, { authorization: 'Bearer not-a-jwt' })).status).toBe(401);
  });

  it('404 for an unknown action', async () => {
    const reply = await invoke('nope', { input: {} }, sales);
    expect(reply).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
  });

  it('403 when access refuses the caller, audited as action.invoke denied', async () => {
    const reply = await invoke('sendDigest', { input: { to: 'a' } }, viewer);
    expect(reply).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    // Admin-only by default: a Sales user may not call celebrate.
    expect((await invoke('celebrate', { input: { id: 'x', name: 'y' } }, sales)).status).toBe(403);
    const entries = await service.ctx.db.any(`select actor_id, outcome, tenant_id, changes from svc_audit where action = 'action.invoke' and outcome = 'denied' order by id`);
    expect(entries[0]).toMatchObject({ actor_id: 'vic', tenant_id: 'acme', changes: { action: 'sendDigest', trigger: 'direct' } });
    expect(await service.ctx.db.any(`select 1 from svc_audit where action = 'access.denied' and actor_id = 'vic'`)).toEqual([]);
  });

  it('403 for a tenant the caller may not act in', async () => {
    expect((await invoke('sendDigest', { input: { to: 'a' } }, sales, { 'x-tenant-id': 'other' })).status).toBe(403);
  });

  it.each([
    [{ input: {} }, 'input.to'],
    [{ input: { to: 5 } }, 'input.to'],
    [{ input: { to: 'a', count: 'many' } }, 'input.count'],
    [{ input: { to: 'a', tags: ['x', 3] } }, 'input.tags.1'],
    [{ input: { to: 'a', since: '2024-02-30' } }, 'input.since'],
    [{ input: { to: 'a', stage: 'cold' } }, 'input.stage'],
    [{ input: { to: 'a', bcc: 'b' } }, 'input.bcc'],
    [{ input: { to: 'a\u0000' } }, 'input.to'],
    [{ input: 'to a' }, 'input'],
    [{ input: { to: 'a' }, wait: 31 }, 'wait'],
    [{ input: { to: 'a' }, wait: -1 }, 'wait'],
    [{ input: { to: 'a' }, idempotencyKey: 7 }, 'idempotencyKey'],
    [{ input: { to: 'a' }, priority: 1 }, 'priority'],
  ])('400 naming the field for %j', async (body, field) => {
    const reply = await invoke('sendDigest', body, sales);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', field });
  });

  it('400 for a picked input that breaks the model\'s rules', async () => {
    const admin2 = await userOf(service, 'Admin', 'root2', 'acme');
    const short = await invoke('scoreLead', { input: { id: 'l1', name: 'x', stage: 'new' } }, admin2);
    expect(short.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'input.name' });
    const missing = await invoke('scoreLead', { input: { name: 'Some Lead', stage: 'new' } }, admin2);
    expect(missing.body.field).toBe('input.id');
  });

  it('202 {jobId, status: queued}: the job carries the caller\'s tenant, actor and input; audited as action.invoke', async () => {
    const reply = await invoke('sendDigest', { input: { to: 'ops@acme.test', tags: ['weekly'], since: '2026-01-01T00:00:00Z' } }, sales);
    expect(reply).toMatchObject({ status: 202, body: { status: 'queued' } });
    const [job] = await actionJobs(service, 'id = $1', [reply.body.jobId]);
    expect(job).toMatchObject({ kind: 'sendDigest', tenant_id: 'acme', created_by: 'sam' });
    expect(job.payload).toEqual({
      action: 'sendDigest', trigger: 'direct', model: null, event: null, eventId: null, recordId: null, tenantId: 'acme',
      input: { to: 'ops@acme.test', tags: ['weekly'], since: '2026-01-01T00:00:00.000Z' }, old: null,
      actor: { id: 'sam', role: 'Sales', tenantId: 'acme' }, depth: 0,
    });
    const entry = await service.ctx.db.one(`select actor_id, tenant_id, entity_type, outcome, changes from svc_audit where action = 'action.invoke' and entity_id = $1`, [job.id]);
    expect(entry).toEqual({ actor_id: 'sam', tenant_id: 'acme', entity_type: 'Job', outcome: 'success', changes: { action: 'sendDigest', trigger: 'direct' } });
  });

  it('an Admin acting in a tenant (X-Tenant-ID) stamps that tenant on the job', async () => {
    const reply = await invoke('celebrate', { input: { id: 'l1', name: 'Lead One' } }, admin, { 'x-tenant-id': 'globex' });
    expect(reply.status).toBe(202);
    const [job] = await actionJobs(service, 'id = $1', [reply.body.jobId]);
    expect(job.tenant_id).toBe('globex');
    expect(job.payload.actor).toEqual({ id: 'root', role: 'Admin', tenantId: 'globex' });
  });

  it('an idempotency key is scoped to the caller (and the action)', async () => {
    const body = { input: { to: 'same' }, idempotencyKey: 'k-1' };
    const first = await invoke('sendDigest', body, sales);
    const again = await invoke('sendDigest', body, sales);
    const manager = await userOf(service, 'Manager', 'mona', 'acme');
    const other = await invoke('sendDigest', body, manager);
    expect(again.body.jobId).toBe(first.body.jobId);
    expect(other.body.jobId).not.toBe(first.body.jobId);
    const entries = await service.ctx.db.one(`select count(*)::int as n from svc_audit where action = 'action.invoke' and entity_id = $1`, [first.body.jobId]);
    expect(entries.n).toBe(1);
  });

  it('wait without a worker: 202 with the status once the time is up', async () => {
    const started = Date.now();
    const reply = await invoke('sendDigest', { input: { to: 'later' }, wait: 0.3 }, sales);
    expect(reply).toMatchObject({ status: 202, body: { status: 'queued' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('wait with a worker process: 200 with the result, or with the error of a dead job', async () => {
    worker = startWorkerProcess(service, await workerToken(service, admin.token, 'acme'));
    const done = await invoke('sendDigest', { input: { to: 'team@acme.test', count: 3 }, wait: 20 }, sales);
    expect(done).toMatchObject({ status: 200, body: { status: 'succeeded', result: { sent: 'team@acme.test', count: 3 } } });
    const dead = await invoke('sendDigest', { input: { to: 'nobody' }, wait: 20 }, sales);
    expect(dead).toMatchObject({ status: 200, body: { status: 'dead', error: 'no such recipient' } });
    // A repeat of a finished call answers at once from the job.
    const repeat = await invoke('sendDigest', { input: { to: 'team@acme.test' }, idempotencyKey: 'done-once', wait: 20 }, sales);
    const again = await invoke('sendDigest', { input: { to: 'team@acme.test' }, idempotencyKey: 'done-once', wait: 20 }, sales);
    expect(again.body).toEqual(repeat.body);
  });
});
