/**
 * Worker uploads (CONTRACT sections 8 and 10): POST /media takes an
 * X-Worker-Token; with X-Job-Id and the job's live X-Lease-Id the media gets
 * the job's tenant; a worker naming a tenant is 403; other routes are JWT only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintWorker, workerClient } from '../jobs/helpers.ts';
import { request, startMediaService, upload, userOf, type MediaService, type User } from './helpers.ts';

let service: MediaService;
let acmeUser: User;
let globexUser: User;
let globalToken: string;

beforeAll(async () => {
  service = await startMediaService();
  acmeUser = await userOf(service, 'Sales', 'alice', 'acme');
  globexUser = await userOf(service, 'Sales', 'gary', 'globex');
  globalToken = (await mintWorker(service, ['media'])).token;
});
afterAll(async () => {
  await service?.close();
});

async function leasedJob(tenantUser: User) {
  const queued = await request(service, 'POST', '/jobs', tenantUser.headers, { queue: 'media', kind: 'thumbnail', payload: {} });
  expect(queued.status).toBe(201);
  const lease = await workerClient(service, globalToken)('/jobs/lease', { queues: ['media'], capacity: 1 });
  expect(lease.body.jobs).toHaveLength(1);
  return lease.body.jobs[0] as { id: string; leaseId: string };
}

const tenantOf = async (id: string) => (await service.ctx.db.one('select tenant_id, owner_kind from svc_media where id = $1', [id]));

describe('POST /media with X-Worker-Token', () => {
  it('gives the upload the tenant of the job whose live lease the worker names', async () => {
    const job = await leasedJob(acmeUser);
    const reply = await upload(service, { 'x-worker-token': globalToken, 'x-job-id': job.id, 'x-lease-id': job.leaseId }, 'thumb');
    expect(reply.status).toBe(201);
    expect(await tenantOf(reply.body.id)).toEqual({ tenant_id: 'acme', owner_kind: 'worker' });
    expect((await request(service, 'GET', `/media/${reply.body.id}`, acmeUser.headers)).status).toBe(200);
    expect((await request(service, 'GET', `/media/${reply.body.id}`, globexUser.headers)).status).toBe(404);
  });

  it('answers 409 for a lease that is not current, and 400 for a job id without a lease id', async () => {
    const job = await leasedJob(globexUser);
    const stale = await upload(service, { 'x-worker-token': globalToken, 'x-job-id': job.id, 'x-lease-id': 'not-the-lease' }, 'x');
    expect(stale.status).toBe(409);
    expect((await upload(service, { 'x-worker-token': globalToken, 'x-job-id': job.id }, 'x')).status).toBe(400);
  });

  it('answers 403 to a worker sending X-Tenant-ID, with or without a job', async () => {
    const job = await leasedJob(acmeUser);
    expect((await upload(service, { 'x-worker-token': globalToken, 'x-tenant-id': 'acme' }, 'x')).status).toBe(403);
    const withJob = { 'x-worker-token': globalToken, 'x-job-id': job.id, 'x-lease-id': job.leaseId, 'x-tenant-id': 'acme' };
    expect((await upload(service, withJob, 'x')).status).toBe(403);
  });

  it('puts a tenant-bound token\'s upload without a job in the token\'s tenant', async () => {
    const { token } = await mintWorker(service, ['acme-q'], 'acme');
    const reply = await upload(service, { 'x-worker-token': token }, 'from acme worker');
    expect(reply.status).toBe(201);
    expect(await tenantOf(reply.body.id)).toEqual({ tenant_id: 'acme', owner_kind: 'worker' });
  });

  it('answers 401 to an unknown or revoked token, and the worker token opens no other route', async () => {
    expect((await upload(service, { 'x-worker-token': 'wkr_nope' }, 'x')).status).toBe(401);
    const { id, token } = await mintWorker(service, ['revoked-q']);
    const admin = await userOf(service, 'Admin', 'admin', null);
    expect((await request(service, 'DELETE', `/jobs/workers/${id}`, admin.headers)).status).toBe(204);
    expect((await upload(service, { 'x-worker-token': token }, 'x')).status).toBe(401);
    const media = (await upload(service, { 'x-worker-token': globalToken }, 'global')).body.id;
    for (const [method, path] of [['GET', `/media/${media}`], ['GET', `/media/${media}/metadata`], ['DELETE', `/media/${media}`]]) {
      expect((await request(service, method, path, { 'x-worker-token': globalToken })).status).toBe(401);
    }
  });
});
