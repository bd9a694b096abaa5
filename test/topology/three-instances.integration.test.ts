/**
 * Three instances on one Postgres behind a round-robin balancer (no sticky
 * sessions): every request and every WebSocket may land on another instance.
 * Records, GraphQL subscriptions, realtime channels and jobs stay correct.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../worker/index.ts';
import { startRoundRobin, type RoundRobin } from '../helpers/round-robin.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { bearer, call, mintWorker, waitFor } from '../jobs/helpers.ts';
import { RtClient } from '../realtime/client.ts';

let database: TestDatabase;
const instances: TestService[] = [];
let balancer: RoundRobin;
let admin: string;

beforeAll(async () => {
  database = await createTestDatabase();
  const env = { RATE_LIMIT_RPS: '1000000', SVC_DB_POOL_SIZE: '5', SVC_JOB_RECLAIM_INTERVAL: '0.5' };
  for (let n = 0; n < 3; n++) instances.push(await startTestService({ database, env }));
  balancer = await startRoundRobin(instances.map((instance) => instance.url));
  admin = await instances[0].token({ role: 'Admin' });
});
afterAll(async () => {
  await balancer?.close();
  for (const instance of instances.reverse()) await instance.close();
  await database?.drop();
});

const gql = async (query: string, variables?: Record<string, unknown>) => {
  const reply = await call(balancer.url, 'POST', '/graphql', { body: { query, variables }, headers: bearer(admin) });
  if (reply.body.errors) throw new Error(JSON.stringify(reply.body.errors));
  return reply.body.data;
};

describe('three instances behind a round robin', () => {
  it('serve records: a write on one instance is read on the others', async () => {
    const before = [...balancer.served.values()];
    for (let n = 0; n < 9; n++) {
      const { create } = await gql('mutation($data: JSON!) { create(model: "Project", data: $data) }', { data: { name: `rr${n}` } });
      // The next request goes to the next instance.
      const { record } = await gql('query($id: ID!) { record(model: "Project", id: $id) }', { id: create.id });
      expect(record).toMatchObject({ id: create.id, name: `rr${n}` });
    }
    const after = [...balancer.served.values()];
    expect(after.map((count, i) => count - before[i])).toEqual([6, 6, 6]);
    const { records } = await gql('query { records(model: "Project", limit: 100) }');
    expect(records).toHaveLength(9);
  });

  it('deliver GraphQL subscriptions for writes made on any instance', async () => {
    const token = await instances[0].token({ role: 'Admin', userId: 'sub-admin' });
    const client: Client = createClient({
      url: `${balancer.url.replace('http', 'ws')}/graphql/ws`, webSocketImpl: WebSocket, connectionParams: { token },
      retryAttempts: 0, lazy: false, onNonLazyError: () => undefined,
    });
    const changes: Array<{ recordId: string }> = [];
    try {
      const connected = new Promise<void>((done) => client.on('connected', () => done()));
      client.subscribe({ query: 'subscription { modelChanges(model: "Project") { eventType recordId } }' }, {
        next: (message) => void changes.push((message.data as { modelChanges: { recordId: string } }).modelChanges),
        error: () => undefined,
        complete: () => undefined,
      });
      await connected;
      // Registered once a write made now is delivered (polled, with a deadline).
      const probe = await gql('mutation { create(model: "Project", data: {name: "probe"}) }');
      await waitFor(async () => changes.some((change) => change.recordId === probe.create.id), 5000);
      const ids: string[] = [];
      for (let n = 0; n < 6; n++) ids.push((await gql('mutation($data: JSON!) { create(model: "Project", data: $data) }', { data: { name: `s${n}` } })).create.id);
      await waitFor(async () => ids.every((id) => changes.some((change) => change.recordId === id)), 5000);
      expect(changes.filter((change) => ids.includes(change.recordId))).toHaveLength(6);
    } finally {
      await client.dispose();
    }
  });

  it('fan realtime messages out to sockets held by every instance', async () => {
    const clients: RtClient[] = [];
    try {
      for (const user of ['a', 'b', 'c']) {
        clients.push(await RtClient.connect(balancer.url, await instances[0].token({ role: 'Viewer', userId: `rr-${user}` })));
      }
      // One socket per instance: the balancer sent each upgrade to the next one.
      expect(instances.map((instance) => (instance.ctx.services.realtime.stats().connections))).toEqual([1, 1, 1]);
      for (const client of clients) await client.subscribe('room:rr');
      clients[0].send({ op: 'publish', channel: 'room:rr', data: { n: 1 } });
      for (const client of clients.slice(1)) {
        expect((await client.next((f) => f.op === 'message' && f.channel === 'room:rr', 5000)).data).toEqual({ n: 1 });
      }
    } finally {
      for (const client of clients) client.close();
    }
  });

  it('run each job exactly once when lease and acknowledgement land on different instances', async () => {
    const queue = `rr-${Date.now()}`;
    for (let n = 0; n < 30; n++) {
      expect((await call(balancer.url, 'POST', '/jobs', { body: { queue, kind: 'k', payload: { n } }, headers: bearer(admin) })).status).toBe(201);
    }
    const { token } = await mintWorker(instances[1], [queue]);
    const runs = new Map<number, number>();
    const worker = createWorker<{ n: number }>({
      baseUrl: balancer.url, token, queues: [queue], capacity: 5, pollIntervalMs: 20, handleSignals: false,
      handler: async (job) => {
        runs.set(job.payload.n, (runs.get(job.payload.n) ?? 0) + 1);
        await job.progress(50);
        return job.payload.n;
      },
    });
    void worker.start();
    try {
      await waitFor(async () => {
        const row = await instances[2].ctx.db.one<{ count: number }>(
          `select count(*) from svc_jobs where queue = $1 and status = 'succeeded' and attempts = 1`, [queue]);
        return row.count === 30;
      }, 20_000);
    } finally {
      await worker.stop();
    }
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(runs.size).toBe(30);
  });
});
