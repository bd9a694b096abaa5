/**
 * Write-back (CONTRACT section 11): a worker holding the lease of an action's
 * job calls POST /graphql with X-Worker-Token, X-Job-Id and X-Lease-Id and
 * acts as the job's actor in the job's tenant. It cannot pick another tenant
 * or identity, a stale or foreign lease is 409, and its writes carry
 * depth + 1: an A -> B -> A loop between two actions stops at
 * SVC_ACTION_MAX_DEPTH (here 2), audited as `action_depth_exceeded`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { waitFor } from '../jobs/helpers.ts';
import { post } from '../records/helpers.ts';
import {
  actionJobs, CREATE, jobsEnded, rest, startActionsService, startWorkerProcess, userOf, workerToken, type User, type WorkerProcess,
} from './helpers.ts';

let service: TestService;
let sales: User;
let admin: User;
let token: string;
let worker: WorkerProcess | null = null;

beforeAll(async () => {
  service = await startActionsService({ env: { SVC_ACTION_MAX_DEPTH: '2' } });
  sales = await userOf(service, 'Sales', 'sally', 'acme');
  admin = await userOf(service, 'Admin', 'root');
  token = await workerToken(service, admin.token, 'acme');
});
afterAll(async () => {
  await worker?.stop();
  await service?.close();
});

async function createLead(name: string) {
  const r = await sales.gql(CREATE, { model: 'Lead', data: { name } });
  if (!r.data?.create) throw new Error(JSON.stringify(r.body));
  return r.data.create;
}

/** Leases the oldest queued action job with `workerToken` (no worker process runs yet). */
async function lease(workerToken = token): Promise<{ id: string; leaseId: string; payload: any }> {
  const reply = await rest(service.url, 'POST', '/jobs/lease', { body: { queues: ['actions'], capacity: 1, visibilitySecs: 60 }, headers: { 'x-worker-token': workerToken } });
  expect(reply.body.jobs).toHaveLength(1);
  return reply.body.jobs[0];
}

const writeBack = (job: { id: string; leaseId: string }, query: string, variables: object = {}, headers: Record<string, string> = {}) =>
  post(service.url, { query, variables }, { 'x-worker-token': token, 'x-job-id': job.id, 'x-lease-id': job.leaseId, ...headers });

describe('write-back by hand (one leased job)', () => {
  let job: { id: string; leaseId: string; payload: any };
  let lead: any;

  beforeAll(async () => {
    lead = await createLead('Hand Leased');
    job = await lease();
    expect(job.payload).toMatchObject({ action: 'scoreLead', recordId: lead.id });
  });

  it('acts as the job\'s actor in the job\'s tenant', async () => {
    const r = await writeBack(job, CREATE, { model: 'Owner', data: { name: 'Olga' } });
    expect(r.errors).toBeUndefined();
    const owner = r.data.create;
    expect(owner.tenantId).toBe('acme');
    const event = await service.ctx.db.one(`select actor_id, tenant_id from svc_events where stream_id = $1`, [owner.id]);
    expect(event).toEqual({ actor_id: 'sally', tenant_id: 'acme' });
    const entry = await service.ctx.db.one(`select actor_id, actor_role, actor_kind from svc_audit where entity_id = $1 and action = 'record.create'`, [owner.id]);
    expect(entry).toEqual({ actor_id: 'sally', actor_role: 'Sales', actor_kind: 'user' });
    const read = await writeBack(job, 'query($id: ID!) { record(model: "Lead", id: $id) }', { id: lead.id });
    expect(read.data.record.name).toBe('Hand Leased');
  });

  it('cannot name another tenant, or act as anyone else', async () => {
    const tenant = await writeBack(job, CREATE, { model: 'Owner', data: { name: 'X' } }, { 'x-tenant-id': 'globex' });
    expect(tenant.status).toBe(403);
    expect(tenant.code).toBe('FORBIDDEN');
    const both = await writeBack(job, CREATE, { model: 'Owner', data: { name: 'X' } }, { authorization: `Bearer ${admin.token}` });
    expect(both.status).toBe(400);
    // The tenant is the server's to set; the actor's role (Sales) may not delete a Lead.
    const stamped = await writeBack(job, CREATE, { model: 'Owner', data: { name: 'X', tenantId: 'globex' } });
    expect(stamped.errors?.[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', field: 'tenantId' });
    const del = await writeBack(job, 'mutation($id: ID!) { delete(model: "Lead", id: $id) }', { id: lead.id });
    expect(del.code).toBe('FORBIDDEN');
    const owners = await service.ctx.db.any(`select tenant_id from "owner" where name = 'X'`);
    expect(owners).toEqual([]);
  });

  it('401 for a bad worker token; 409 for a stale or foreign lease, before anything else is looked at', async () => {
    const bad = await writeBack(job, '{ __typename }', {}, { 'x-worker-token': 'wkr_nope' });
    expect(bad.status).toBe(401);
    const stale = await writeBack({ id: job.id, leaseId: 'stale' }, CREATE, { model: 'Owner', data: { name: 'Y' } }, { 'x-tenant-id': 'globex' });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ errors: [{ message: expect.stringContaining('lease'), extensions: { code: 'FORBIDDEN' } }] });
    const other = await workerToken(service, admin.token, 'acme');
    const foreign = await writeBack(job, CREATE, { model: 'Owner', data: { name: 'Y' } }, { 'x-worker-token': other });
    expect(foreign.status).toBe(409);
    const missing = await writeBack({ id: job.id, leaseId: '' }, '{ __typename }');
    expect(missing.status).toBe(400);
  });

  it('only a job of queue actions may write back', async () => {
    const both = await rest(service.url, 'POST', '/jobs/workers', {
      body: { name: 'mail', queues: ['mail'] }, headers: { authorization: `Bearer ${admin.token}`, 'x-tenant-id': 'acme' },
    });
    await rest(service.url, 'POST', '/jobs', { body: { queue: 'mail', kind: 'send', payload: { actor: { id: 'root', role: 'Admin' }, depth: 0 } }, headers: { authorization: `Bearer ${sales.token}` } });
    const leased = await rest(service.url, 'POST', '/jobs/lease', { body: { queues: ['mail'] }, headers: { 'x-worker-token': both.body.token } });
    const [mail] = leased.body.jobs;
    const r = await writeBack(mail, CREATE, { model: 'Owner', data: { name: 'Z' } }, { 'x-worker-token': both.body.token });
    expect(r.status).toBe(403);
  });

  it('a completed job\'s lease writes no more', async () => {
    const done = await rest(service.url, 'POST', `/jobs/${job.id}/complete`, { body: { leaseId: job.leaseId, result: null }, headers: { 'x-worker-token': token } });
    expect(done.status).toBe(204);
    expect((await writeBack(job, CREATE, { model: 'Owner', data: { name: 'Late' } })).status).toBe(409);
  });
});

describe('a worker process using the SDK', () => {
  beforeAll(() => {
    worker = startWorkerProcess(service, token);
  });

  it('handles a bound action and writes back as the actor', async () => {
    const lead = await createLead('Katherine Johnson');
    const [job] = await actionJobs(service, `payload->>'recordId' = $1 and kind = 'scoreLead'`, [lead.id]);
    const [ended] = await jobsEnded(service, [job.id]);
    expect(ended.status).toBe('succeeded');
    const row = await service.ctx.db.one(`select score from "lead" where id = $1`, [lead.id]);
    expect(row.score).toBe('Katherine Johnson'.length);
    const [update] = await service.ctx.db.any(`select actor_id, tenant_id, data from svc_events where stream_id = $1 and event_type = 'Updated'`, [lead.id]);
    expect(update).toMatchObject({ actor_id: 'sally', tenant_id: 'acme', data: { score: 17 } });
  });

  it('stops an A -> B -> A loop at SVC_ACTION_MAX_DEPTH, audited as action_depth_exceeded', async () => {
    const r = await sales.gql(CREATE, { model: 'Ping', data: { n: 0 } });
    expect(r.errors).toBeUndefined();
    // Waiting on an external process: the last hop's write (Pong n=3) and its audit entry.
    const denied = await waitFor(async () => (await service.ctx.db.oneOrNone(
      `select entity_type, changes, tenant_id, actor_id from svc_audit where action = 'action.invoke' and outcome = 'denied'`)), 20_000);
    expect(denied).toEqual({ entity_type: 'Pong', changes: { action: 'pong', error: 'action_depth_exceeded', depth: 3 }, tenant_id: 'acme', actor_id: 'sally' });
    const jobs = await actionJobs(service, `kind in ('ping', 'pong')`);
    expect(jobs.map((j) => [j.kind, j.payload.depth, j.payload.input.n])).toEqual([['ping', 0, 0], ['pong', 1, 1], ['ping', 2, 2]]);
    await jobsEnded(service, jobs.map((j) => j.id));
    expect((await service.ctx.db.one(`select count(*)::int as n from "pong"`)).n).toBe(2);
    expect((await service.ctx.db.one(`select count(*)::int as n from "ping"`)).n).toBe(2);
  });
});
