/**
 * A connection pooler in transaction mode (pgbouncer 1.18) between the service
 * and Postgres: records, jobs and realtime work through it. With
 * SVC_DB_POOLER=transaction no named prepared statement and no session state
 * crosses statements; LISTEN and the migrations' advisory lock go to
 * SVC_DIRECT_DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../worker/index.ts';
import { startPgbouncer, type Pgbouncer } from '../helpers/pgbouncer.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { bearer, call, mintWorker, waitFor } from '../jobs/helpers.ts';
import { RtClient } from '../realtime/client.ts';

let bouncer: Pgbouncer;
let database: TestDatabase;
let service: TestService;
let admin: string;

const transactions = async (name: string) =>
  Number((await bouncer.show('STATS')).find((row) => row.database === name)?.total_xact_count ?? 0);

beforeAll(async () => {
  bouncer = await startPgbouncer({ poolSize: 3 });
  database = await createTestDatabase();
  service = await startTestService({
    database,
    env: {
      DATABASE_URL: bouncer.pooled(database.url),
      SVC_DIRECT_DATABASE_URL: database.url,
      SVC_DB_POOLER: 'transaction',
      SVC_DB_POOL_SIZE: '12',
      RATE_LIMIT_RPS: '1000000',
    },
  });
  admin = await service.token({ role: 'Admin' });
});
afterAll(async () => {
  await service?.close();
  await database?.drop();
  await bouncer?.stop();
});

const gql = async (query: string, variables?: Record<string, unknown>) => {
  const reply = await call(service.url, 'POST', '/graphql', { body: { query, variables }, headers: bearer(admin) });
  if (reply.body.errors) throw new Error(JSON.stringify(reply.body.errors));
  return reply.body.data;
};

describe('behind pgbouncer in transaction mode', () => {
  it('turns named prepared statements off and routes its pool through the pooler', async () => {
    expect(service.ctx.config.db).toMatchObject({ pooler: 'transaction', directUrl: database.url, prepared: false, readUrl: null });
    const before = await transactions(database.name);
    await gql('query { records(model: "Project") }');
    expect(await transactions(database.name)).toBeGreaterThan(before);
  });

  it('creates, reads, updates and lists records under concurrency', async () => {
    const created = await Promise.all(Array.from({ length: 40 }, (_, n) =>
      gql('mutation($data: JSON!) { create(model: "Project", data: $data) }', { data: { name: `p${n}` } })));
    const ids = created.map((data) => data.create.id as string);
    expect(new Set(ids).size).toBe(40);
    // The same statements again and again, on server connections shared with other clients.
    const reads = await Promise.all(ids.map((id) => gql('query($id: ID!) { record(model: "Project", id: $id) }', { id })));
    expect(reads.map((data) => data.record.name).sort()).toEqual(created.map((data) => data.create.name).sort());
    await Promise.all(ids.slice(0, 10).map((id, n) =>
      gql('mutation($id: ID!, $data: JSON!) { update(model: "Project", id: $id, data: $data) }', { id, data: { name: `renamed${n}` } })));
    const listed = await gql('query { records(model: "Project", limit: 100) }');
    expect(listed.records).toHaveLength(40);
    expect(listed.records.filter((row: { name: string }) => row.name.startsWith('renamed'))).toHaveLength(10);
  });

  it('runs jobs end to end with the worker SDK', async () => {
    const queue = `pooled-${Date.now()}`;
    const ids: string[] = [];
    for (let n = 0; n < 30; n++) {
      const reply = await call(service.url, 'POST', '/jobs', { body: { queue, kind: 'k', payload: { n } }, headers: bearer(admin) });
      expect(reply.status).toBe(201);
      ids.push(reply.body.id);
    }
    const { token } = await mintWorker(service, [queue]);
    const worker = createWorker<{ n: number }>({
      baseUrl: service.url, token, queues: [queue], capacity: 10, pollIntervalMs: 20, handleSignals: false,
      handler: async (job) => {
        await job.progress(50, 'half');
        return { double: job.payload.n * 2 };
      },
    });
    void worker.start();
    try {
      await waitFor(async () => {
        const rows = await service.ctx.db.one<{ count: number }>(
          `select count(*) from svc_jobs where queue = $1 and status = 'succeeded'`, [queue]);
        return rows.count === 30;
      }, 20_000);
    } finally {
      await worker.stop();
    }
    const job = await call(service.url, 'GET', `/jobs/${ids[3]}`, { headers: bearer(admin) });
    expect(job.body).toMatchObject({ status: 'succeeded', result: { double: 6 } });
  });

  it('delivers realtime messages (LISTEN on the direct URL, NOTIFY through the pooler)', async () => {
    const alice = await RtClient.connect(service.url, await service.token({ role: 'Viewer', userId: 'alice' }));
    const bob = await RtClient.connect(service.url, await service.token({ role: 'Viewer', userId: 'bob' }));
    try {
      await alice.subscribe('room:pooled');
      await bob.subscribe('room:pooled');
      alice.send({ op: 'publish', channel: 'room:pooled', data: { hello: 'through pgbouncer' } });
      const frame = await bob.next((f) => f.op === 'message' && f.channel === 'room:pooled', 5000);
      expect(frame.data).toEqual({ hello: 'through pgbouncer' });
    } finally {
      alice.close();
      bob.close();
    }
  });
});
