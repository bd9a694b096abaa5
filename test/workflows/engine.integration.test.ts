/**
 * The workflow engine against a real server and Postgres: an event-triggered
 * run created with its write, a job step awaiting a real worker's result, a
 * delay that survives a restart, http steps and the allowlist, retries with
 * backoff, the stop policy, and the routes' access and tenant rules.
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker, type Worker } from '../../worker/index.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { RtClient } from '../realtime/client.ts';
import { call, finished, FLOW, FLOW_V2, gql, receiver, run, watchRun } from './helpers.ts';

const ENV = { SVC_WORKFLOW_HTTP_ALLOW: 'http://127.0.0.1:47312', SVC_WORKFLOW_POLL_MS: '200', SVC_JOB_RECLAIM_INTERVAL: '0.5', RATE_LIMIT_RPS: '100000' };

let service: TestService;
let manager: string;
let admin: string;
let worker: Worker<any, any>;
let hooks: Awaited<ReturnType<typeof receiver>>;
let flakyCalls = 0;

beforeAll(async () => {
  hooks = await receiver(47312, (r) => {
    if (r.path === '/flaky') return ++flakyCalls < 3 ? { status: 500, body: { error: 'not yet' } } : { status: 200, body: { ok: true } };
    return { status: 200, body: { received: r.body.n } };
  });
  service = await startTestService({ fixture: FLOW, env: ENV });
  manager = await service.token({ role: 'Manager', userId: 'mgr' });
  admin = await service.token({ role: 'Admin', userId: 'root' });
  const minted = await call(service.url, 'POST', '/jobs/workers', admin, { name: 'billing', queues: ['billing'] });
  worker = createWorker({
    baseUrl: service.url, token: minted.body.token, queues: ['billing'], pollIntervalMs: 50, handleSignals: false,
    handler: async (job) => ({ ok: (job.payload as any).amount < 1000, chargedFor: (job.payload as any).orderId }),
  });
  void worker.start();
});
afterAll(async () => {
  await worker?.stop();
  await service?.close();
  await hooks?.close();
});

const createOrder = (data: Record<string, unknown>) =>
  gql(service.url, manager, 'mutation($d: JSON!) { create(model: "Order", data: $d) }', { d: data }).then((d) => d.create);
const updateOrder = (id: string, data: Record<string, unknown>) =>
  gql(service.url, manager, 'mutation($id: ID!, $d: JSON!) { update(model: "Order", id: $id, data: $d) }', { id, d: data });
const getOrder = (id: string) => gql(service.url, manager, 'query($id: ID!) { record(model: "Order", id: $id) }', { id }).then((d) => d.record);
const runsOf = (workflow: string) => call(service.url, 'GET', `/workflows/runs?workflow=${workflow}`, admin).then((r) => r.body.items);
const start = (workflow: string, input: unknown, token = manager) => call(service.url, 'POST', `/workflows/${workflow}/run`, token, { input });

describe('event-triggered runs', () => {
  it('start with the write, await a real worker\'s result, and act with the writer\'s permissions', async () => {
    const order = await createOrder({ title: 'lamp', amount: 40 });
    expect(await runsOf('onPaid')).toEqual([]);
    await updateOrder(order.id, { status: 'paid' });
    // Created in the write's transaction: visible as soon as the write returned.
    const [started] = await runsOf('onPaid');
    expect(started).toMatchObject({ workflow: 'onPaid', trigger: 'event' });
    const done = await watchRun(service.url, admin, started.id);
    expect(done.status).toBe('succeeded');
    expect(done.steps.map((s: any) => [s.id, s.status, s.attempts])).toEqual([['note', 'succeeded', 1], ['charge', 'succeeded', 1], ['ship', 'succeeded', 1]]);
    expect(done.steps[1].output.result).toEqual({ ok: true, chargedFor: order.id });
    expect(await getOrder(order.id)).toMatchObject({ note: 'paid by mgr (was new)', shipped: true, status: 'shipped' });
    // The mutation steps are the writer's writes, one hop further; their own updates start nothing (status changed to shipped).
    expect(await runsOf('onPaid')).toHaveLength(1);
  });

  it('skip a step whose if is false (the worker refused the charge)', async () => {
    const order = await createOrder({ title: 'yacht', amount: 5000 });
    await updateOrder(order.id, { status: 'paid' });
    const [started] = await runsOf('onPaid');
    const done = await watchRun(service.url, admin, started.id);
    expect(done.steps.map((s: any) => s.status)).toEqual(['succeeded', 'succeeded', 'skipped']);
    expect(await getOrder(order.id)).toMatchObject({ shipped: false, status: 'paid' });
  });

  it('start nothing for a write that does not match or that rolls back', async () => {
    const before = (await runsOf('onPaid')).length;
    const order = await createOrder({ title: 'chair', amount: 10 });
    await updateOrder(order.id, { note: 'no status change' });
    await expect(updateOrder(order.id, { status: 'paid', amount: -1 })).rejects.toThrow(/VALIDATION_ERROR/);
    expect((await runsOf('onPaid')).length).toBe(before);
  });

  it('write each transition to the event log and a workflow.run audit entry at start and end', async () => {
    const [latest] = await runsOf('onPaid');
    const events = await service.ctx.db.manyOrNone(`select event_type from svc_events where stream_type = 'WorkflowRun' and stream_id = $1 order by seq`, [latest.id]);
    expect(events.map((e) => e.event_type)).toEqual(expect.arrayContaining(['WorkflowRunStarted', 'WorkflowStepSucceeded', 'WorkflowStepWaiting', 'WorkflowStepJobEnded', 'WorkflowRunSucceeded']));
    const audit = await call(service.url, 'GET', `/audit/entity/WorkflowRun/${latest.id}/audit`, admin);
    expect(audit.status).toBe(200);
    expect(audit.body.items.map((e: any) => [e.action, e.outcome, e.changes.status])).toEqual([['workflow.run', 'success', 'succeeded'], ['workflow.run', 'success', 'running']]);
  });
});

describe('run transitions in the change feed', () => {
  it('reach a GraphQL subscription to the WorkflowRun stream (Admins), resumed after a known event', async () => {
    const { body } = await start('hook', { n: 3 });
    const startedEvent = await service.ctx.db.one(`select id from svc_events where stream_id = $1 and event_type = 'WorkflowRunStarted'`, [body.runId]);
    const client = createClient({ url: `${service.url.replace('http', 'ws')}/graphql/ws`, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { token: admin } });
    try {
      const types: string[] = [];
      await new Promise<void>((resolve, reject) => {
        client.subscribe({
          query: 'subscription($after: ID) { modelChanges(model: "WorkflowRun", after: $after) { eventType recordId } }',
          variables: { after: startedEvent.id },
        }, {
          next: (message: any) => {
            const change = message.data?.modelChanges;
            if (change?.recordId === body.runId) types.push(change.eventType);
            if (change?.eventType === 'WorkflowRunSucceeded' && change.recordId === body.runId) resolve();
          },
          error: reject, complete: () => undefined,
        });
      });
      expect(types).toEqual(['WorkflowStepStarted', 'WorkflowStepSucceeded', 'WorkflowStepSucceeded', 'WorkflowRunSucceeded']);
    } finally {
      await client.dispose();
    }
    const other = createClient({ url: `${service.url.replace('http', 'ws')}/graphql/ws`, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { token: manager } });
    try {
      const refused = await new Promise<any>((resolve) => {
        other.subscribe({ query: 'subscription { modelChanges(model: "WorkflowRun") { eventType } }' }, {
          next: (message: any) => resolve(message.errors ?? message), error: resolve, complete: () => undefined,
        });
      });
      expect(JSON.stringify(refused)).toContain('FORBIDDEN');
    } finally {
      await other.dispose();
    }
  });
});

describe('manual runs', () => {
  it('store vars, wait out a delay that holds no process, survive a restart, and pin their definition', async () => {
    const { status, body } = await start('later', { amount: 12, seconds: 2 });
    expect(status).toBe(202);
    await watchRun(service.url, manager, body.runId, (r) => r.status === 'waiting');
    // No runner holds it: the advance is a queued job, visible later.
    const queued = await service.ctx.db.one(`select status, visible_at > now() as later from svc_jobs where queue = 'svc.workflows' and payload->>'runId' = $1 order by id desc limit 1`, [body.runId]);
    expect(queued).toEqual({ status: 'queued', later: true });
    // A restart during the delay, into a schema whose `later` has other steps: the run finishes as it started.
    await service.stop();
    const second = await startTestService({ fixture: FLOW_V2, env: ENV, database: service.database });
    try {
      const done = await watchRun(second.url, manager, body.runId);
      expect(done.status).toBe('succeeded');
      expect(done.steps.map((s: any) => [s.id, s.status])).toEqual([['keep', 'succeeded'], ['wait', 'succeeded'], ['make', 'succeeded'], ['never', 'skipped']]);
      const fresh = await call(second.url, 'POST', '/workflows/later/run', manager, { input: {} });
      expect((await watchRun(second.url, manager, fresh.body.runId)).steps.map((s: any) => s.id)).toEqual(['replaced']);
      expect(done.steps[2].output.result).toMatchObject({ title: 'after 2s', amount: 12 });
      const waited = Date.parse(done.steps[1].finishedAt) - Date.parse(done.steps[1].startedAt);
      expect(waited).toBeGreaterThanOrEqual(2000);
    } finally {
      await second.stop();
      service = await startTestService({ fixture: FLOW, env: ENV, database: service.database });
    }
  });

  it('stop a run at a refused mutation, leaving later steps pending', async () => {
    const { body } = await start('broken', {});
    const done = await watchRun(service.url, manager, body.runId);
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^step bad: .*title/);
    expect(done.steps.map((s: any) => [s.status, s.attempts])).toEqual([['failed', 1], ['pending', 0]]);
  });
});

describe('http steps', () => {
  it('reach an allowlisted origin with an Idempotency-Key; the answer is the step output', async () => {
    const { body } = await start('hook', { n: 7 });
    const done = await watchRun(service.url, manager, body.runId);
    expect(done.status).toBe('succeeded');
    expect(done.steps[0].output).toEqual({ status: 200, result: { received: 7 } });
    const sent = hooks.received.find((r) => r.path === '/hook' && r.body.n === 7)!;
    expect(sent.headers['idempotency-key']).toBe(`${body.runId}:ping`);
    expect(sent.headers['x-source']).toBe('svc');
    const vars = await service.ctx.db.one('select vars from svc_workflow_runs where id = $1', [body.runId]);
    expect(vars.vars).toEqual({ got: 7 });
  });

  it('retry a failing request with backoff until it succeeds', async () => {
    const { body } = await start('flaky', {});
    const done = await watchRun(service.url, manager, body.runId);
    expect(done.status).toBe('succeeded');
    expect(done.steps[0].attempts).toBe(3);
    const retries = await service.ctx.db.manyOrNone(
      `select data->>'error' as error from svc_events where stream_id = $1 and event_type = 'WorkflowStepRetryScheduled' order by seq`, [body.runId]);
    expect(retries.map((r) => r.error)).toEqual(['POST http://127.0.0.1:47312 answered 500', 'POST http://127.0.0.1:47312 answered 500']);
    // Backoff: at least 1 s, then 2 s (jitter in [0.5, 1) of 2^attempt) between the three requests.
    const jobs = await service.ctx.db.manyOrNone(`select visible_at, created_at from svc_jobs where queue = 'svc.workflows' and payload->>'runId' = $1 and idempotency_key like '%:retry%' order by id`, [body.runId]);
    expect(jobs).toHaveLength(2);
  });

  it('never send to an origin outside SVC_WORKFLOW_HTTP_ALLOW', async () => {
    const closed = await startTestService({ fixture: FLOW, env: { ...ENV, SVC_WORKFLOW_HTTP_ALLOW: 'https://hooks.example.com' } });
    try {
      const token = await closed.token({ role: 'Manager', userId: 'mgr' });
      const before = hooks.received.length;
      const { body } = await call(closed.url, 'POST', '/workflows/hook/run', token, { input: { n: 99 } });
      const done = await watchRun(closed.url, token, body.runId);
      expect(done.status).toBe('failed');
      expect(done.steps[0].error).toBe('origin http://127.0.0.1:47312 is not in SVC_WORKFLOW_HTTP_ALLOW: not sent');
      expect(hooks.received.length).toBe(before);
    } finally {
      await closed.close();
    }
  });
});

describe('routes', () => {
  it('list the workflows open to the caller', async () => {
    const all = await call(service.url, 'GET', '/workflows', admin);
    expect(all.body.items.map((w: any) => w.name)).toEqual(['broken', 'crashy', 'flaky', 'hook', 'later', 'onPaid']);
    expect(all.body.items.find((w: any) => w.name === 'onPaid').trigger).toEqual({ kind: 'event', on: 'Order.updated' });
    const mine = await call(service.url, 'GET', '/workflows', manager);
    expect(mine.body.items.map((w: any) => w.name)).toEqual(['broken', 'crashy', 'flaky', 'hook', 'later']);
    const viewer = await service.token({ role: 'Viewer', userId: 'v' });
    expect((await call(service.url, 'GET', '/workflows', viewer)).status).toBe(403);
    expect((await call(service.url, 'GET', '/workflows', null)).status).toBe(401);
  });

  it('refuse bad requests with the field named', async () => {
    expect((await start('nope', {})).status).toBe(404);
    expect((await start('onPaid', {})).status).toBe(403);
    expect((await start('onPaid', {}, admin)).status).toBe(409);
    expect(await start('later', [1, 2]).then((r) => [r.status, r.body.field])).toEqual([400, 'input']);
    expect(await call(service.url, 'GET', '/workflows/runs?status=done', manager).then((r) => [r.status, r.body.field])).toEqual([400, 'status']);
    expect(await call(service.url, 'GET', '/workflows/runs?workflow=onPaid', manager).then((r) => [r.status, r.body.field])).toEqual([400, 'workflow']);
    expect((await call(service.url, 'GET', '/workflows/runs/unknown', manager)).status).toBe(404);
    // The engine's queue is reserved: no client enqueues into it, no worker token leases it.
    expect(await call(service.url, 'POST', '/jobs', admin, { queue: 'svc.workflows', kind: 'advance', payload: { runId: 'x', position: 0 } }).then((r) => r.status)).toBe(400);
    expect(await call(service.url, 'POST', '/jobs/workers', admin, { name: 'sneaky', queues: ['svc.workflows'] }).then((r) => r.status)).toBe(400);
  });

  it('page runs newest first and filter by status', async () => {
    const page = await call(service.url, 'GET', '/workflows/runs?limit=2', admin);
    expect(page.body.items).toHaveLength(2);
    expect(page.body.nextCursor).toBe(page.body.items[1].id);
    const next = await call(service.url, 'GET', `/workflows/runs?limit=2&cursor=${page.body.nextCursor}`, admin);
    expect(next.body.items[0].id < page.body.items[1].id).toBe(true);
    const failed = await call(service.url, 'GET', '/workflows/runs?status=failed', admin);
    expect(failed.body.items.length).toBeGreaterThan(0);
    expect(failed.body.items.every((r: any) => r.status === 'failed')).toBe(true);
  });

  it('keep runs inside their tenant, for reads and for the realtime channel', async () => {
    const tenantA = await service.token({ role: 'Manager', userId: 'mgr-a', tenantId: 'tenant-a' });
    const { body } = await start('hook', { n: 1 }, tenantA);
    expect((await run(service.url, tenantA, body.runId)).id).toBe(body.runId);
    expect((await call(service.url, 'GET', `/workflows/runs/${body.runId}`, manager)).status).toBe(404);
    expect((await call(service.url, 'GET', '/workflows/runs?workflow=hook', manager)).body.items.some((r: any) => r.id === body.runId)).toBe(false);
    const rt = await RtClient.connect(service.url, manager);
    try {
      rt.send({ op: 'subscribe', channel: `workflow:${body.runId}` });
      expect(await rt.next((f) => f.op === 'error' || f.op === 'subscribed')).toMatchObject({ op: 'error' });
    } finally {
      rt.ws.close();
    }
    expect(finished(await watchRun(service.url, tenantA, body.runId))).toBe(true);
  });
});
