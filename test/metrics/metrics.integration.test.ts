/**
 * GET /metrics over real HTTP (CONTRACT section 13): what it reports after
 * real traffic, and who may read it.
 */
import { readFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../../runtime/service/index.ts';
import { MAX_QUEUE_SERIES, OTHER_QUEUES } from '../../runtime/metrics/index.ts';
import { buildFixture, loadDefinition, REPO_ROOT, startTestService, TEST_JWT_SECRET, type TestService } from '../helpers/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { bearer, call, mintWorker, waitFor, workerHeader } from '../jobs/helpers.ts';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { RtClient } from '../realtime/client.ts';

const TOKEN = 'metrics-token-0123456789abcdef';

async function scrape(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; type: string | null }> {
  const response = await fetch(`${url}/metrics`, { headers });
  return { status: response.status, text: await response.text(), type: response.headers.get('content-type') };
}

/** The value of one sample line (`name{labels} value`), or null when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const body = line.slice(name.length);
    const labelText = body.startsWith('{') ? body.slice(1, body.indexOf('}')) : '';
    if (Object.entries(labels).every(([k, v]) => labelText.split(',').includes(`${k}="${v}"`))) {
      return Number(body.slice(body.lastIndexOf(' ') + 1));
    }
  }
  return null;
}

/** A non-loopback IPv4 address of this machine: a peer connecting through it is not loopback. */
function externalAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) if (address.family === 'IPv4' && !address.internal) return address.address;
  }
  throw new Error('this test needs a non-loopback IPv4 interface');
}

describe('GET /metrics (no SVC_METRICS_TOKEN)', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ env: { RATE_LIMIT_RPS: '100000' } });
  });
  afterAll(() => service?.close());

  it('answers Prometheus text to a loopback client', async () => {
    const { status, text, type } = await scrape(service.url);
    expect(status).toBe(200);
    expect(type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(text).toMatch(/^# HELP svc_http_requests_total /m);
    // prom-client counts CPU time from its own registration, in jiffies: 0 is a valid first reading.
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_eventloop_lag_seconds')).not.toBeNull();
  });

  it('labels HTTP requests by the matched route pattern and status, never the raw URL', async () => {
    const admin = await service.token({ role: 'Admin' });
    const missing = await call(service.url, 'GET', '/jobs/01JOBTHATDOESNOTEXIST0000', { headers: bearer(admin) });
    expect(missing.status).toBe(404);
    expect((await call(service.url, 'GET', '/no/such/path-123')).status).toBe(404);
    const { text } = await scrape(service.url);
    expect(sample(text, 'svc_http_requests_total', { method: 'GET', route: '/jobs/:id', status: '404' })).toBe(1);
    expect(sample(text, 'svc_http_request_duration_seconds_count', { method: 'GET', route: '/jobs/:id', status: '404' })).toBe(1);
    expect(sample(text, 'svc_http_request_duration_seconds_bucket', { route: '/jobs/:id', le: '+Inf' })).toBe(1);
    expect(sample(text, 'svc_http_requests_total', { route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('01JOBTHATDOESNOTEXIST0000');
    expect(text).not.toContain('path-123');
  });

  it('counts GraphQL operations by type and outcome', async () => {
    const admin = await service.token({ role: 'Admin' });
    const gql = (query: string) => call(service.url, 'POST', '/graphql', { body: { query }, headers: bearer(admin) });
    expect((await gql('query { records(model: "Project") }')).status).toBe(200);
    expect((await gql('mutation { create(model: "Project", data: {name: ""}) }')).body.errors).toHaveLength(1);
    expect((await gql('query { nope')).status).toBe(400);
    const { text } = await scrape(service.url);
    expect(sample(text, 'svc_graphql_operations_total', { type: 'query', outcome: 'success' })).toBe(1);
    expect(sample(text, 'svc_graphql_operations_total', { type: 'mutation', outcome: 'error' })).toBe(1);
    expect(sample(text, 'svc_graphql_operations_total', { type: 'unknown', outcome: 'invalid' })).toBe(1);
    expect(sample(text, 'svc_graphql_operation_duration_seconds_count', { type: 'query' })).toBe(1);
  });

  it('counts subscriptions started over /graphql/ws', async () => {
    const token = await service.token({ role: 'Admin', userId: 'ws-metrics' });
    const client = createClient({
      url: `${service.url.replace('http', 'ws')}/graphql/ws`, webSocketImpl: WebSocket, connectionParams: { token },
      retryAttempts: 0, lazy: false, onNonLazyError: () => undefined,
    });
    try {
      client.subscribe({ query: 'subscription { modelChanges(model: "Project") { recordId } }' }, {
        next: () => undefined, error: () => undefined, complete: () => undefined,
      });
      client.subscribe({ query: 'subscription { nope }' }, { next: () => undefined, error: () => undefined, complete: () => undefined });
      await waitFor(async () => {
        const { text } = await scrape(service.url);
        return sample(text, 'svc_graphql_operations_total', { type: 'subscription', outcome: 'success' }) === 1
          && sample(text, 'svc_graphql_operations_total', { type: 'unknown', outcome: 'invalid' }) === 2;
      }, 5000);
    } finally {
      await client.dispose();
    }
  });

  it('reports jobs by queue and status, and lease-to-complete latency', async () => {
    const user = await service.token({ role: 'Admin' });
    const queue = `metrics-${Date.now()}`;
    for (let n = 0; n < 3; n++) {
      expect((await call(service.url, 'POST', '/jobs', { body: { queue, kind: 'k' }, headers: bearer(user) })).status).toBe(201);
    }
    let { text } = await scrape(service.url);
    expect(sample(text, 'svc_jobs', { queue, status: 'queued' })).toBe(3);

    const worker = await mintWorker(service, [queue]);
    const leased = await call(service.url, 'POST', '/jobs/lease', { body: { queues: [queue], capacity: 2 }, headers: workerHeader(worker.token) });
    expect(leased.body.jobs).toHaveLength(2);
    const [first, second] = leased.body.jobs;
    expect((await call(service.url, 'POST', `/jobs/${first.id}/complete`, {
      body: { leaseId: first.leaseId, result: 1 }, headers: workerHeader(worker.token),
    })).status).toBe(204);
    expect((await call(service.url, 'POST', '/jobs/complete', {
      body: { items: [{ id: second.id, leaseId: second.leaseId, result: 2 }] }, headers: workerHeader(worker.token),
    })).status).toBe(200);

    ({ text } = await scrape(service.url));
    expect(sample(text, 'svc_jobs', { queue, status: 'queued' })).toBe(1);
    expect(sample(text, 'svc_jobs', { queue, status: 'succeeded' })).toBe(2);
    expect(sample(text, 'svc_job_lease_to_complete_seconds_count', { queue })).toBe(2);
    const sum = sample(text, 'svc_job_lease_to_complete_seconds_sum', { queue })!;
    expect(sum).toBeGreaterThanOrEqual(0);
    expect(sum).toBeLessThan(30);
  });

  it('keeps the queue label bounded whatever queue names clients choose', async () => {
    // A Viewer may enqueue on any queue name: 300 names (six times the bound) must not make 300 series.
    const viewer = await service.token({ role: 'Viewer' });
    const prefix = `spray-${Date.now()}-`;
    const names = Array.from({ length: 300 }, (_, n) => `${prefix}${n}`);
    for (let start = 0; start < names.length; start += 50) {
      const replies = await Promise.all(names.slice(start, start + 50).map((queue) =>
        call(service.url, 'POST', '/jobs', { body: { queue, kind: 'k' }, headers: bearer(viewer) })));
      expect(replies.every((reply) => reply.status === 201)).toBe(true);
    }
    // A worker that may lease any queue completes jobs on 120 of them.
    const worker = await mintWorker(service, ['*']);
    for (let start = 0; start < 120; start += 40) {
      const queues = names.slice(start, start + 40);
      const leased = await call(service.url, 'POST', '/jobs/lease', { body: { queues, capacity: 40 }, headers: workerHeader(worker.token) });
      expect(leased.body.jobs).toHaveLength(40);
      const items = leased.body.jobs.map((job: { id: string; leaseId: string }) => ({ id: job.id, leaseId: job.leaseId, result: 1 }));
      expect((await call(service.url, 'POST', '/jobs/complete', { body: { items }, headers: workerHeader(worker.token) })).status).toBe(200);
    }

    const { text } = await scrape(service.url);
    const queuesOf = (name: string) => new Set(text.split('\n')
      .filter((line) => line.startsWith(`${name}{`))
      .map((line) => /queue="([^"]*)"/.exec(line)?.[1]));
    const jobQueues = queuesOf('svc_jobs');
    const latencyQueues = queuesOf('svc_job_lease_to_complete_seconds_count');
    expect(jobQueues.size).toBeLessThanOrEqual(MAX_QUEUE_SERIES + 1);
    expect(latencyQueues.size).toBeLessThanOrEqual(MAX_QUEUE_SERIES + 1);
    expect(jobQueues.has(OTHER_QUEUES)).toBe(true);
    expect(latencyQueues.has(OTHER_QUEUES)).toBe(true);
    // Folding loses no job: every queued and succeeded job is still counted.
    const total = (status: string) => text.split('\n')
      .filter((line) => line.startsWith('svc_jobs{') && line.includes(`status="${status}"`))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
    expect(total('succeeded')).toBeGreaterThanOrEqual(120);
    expect(total('queued')).toBeGreaterThanOrEqual(180);
  }, 90_000);

  it("reports realtime connections and channels, the pool, and the change feed's lag", async () => {
    const token = await service.token({ role: 'Viewer', userId: 'rt-metrics' });
    const client = await RtClient.connect(service.url, token);
    try {
      await client.subscribe('room:metrics');
      await client.subscribe('room:other');
      const { text } = await scrape(service.url);
      expect(sample(text, 'svc_realtime_connections')).toBe(1);
      expect(sample(text, 'svc_realtime_channels')).toBe(2);
      expect(sample(text, 'svc_db_pool_connections', { state: 'total' })).toBeGreaterThan(0);
      expect(sample(text, 'svc_db_pool_connections', { state: 'idle' })).not.toBeNull();
      expect(sample(text, 'svc_db_pool_connections', { state: 'waiting' })).not.toBeNull();
      expect(sample(text, 'svc_db_pool_max')).toBe(10);
      const lag = sample(text, 'svc_feed_lag_seconds');
      expect(lag).toBeGreaterThanOrEqual(0);
      expect(lag).toBeLessThan(60);
    } finally {
      client.close();
      await client.waitClosed();
    }
  });

  it('serves every series the sample Grafana dashboard queries', async () => {
    const dashboard = readFileSync(join(REPO_ROOT, 'docs', 'grafana-dashboard.json'), 'utf8');
    const names = new Set(dashboard.match(/\b(svc|nodejs|process)_[a-z0-9_]+/g));
    expect(names.size).toBeGreaterThan(8);
    const { text } = await scrape(service.url);
    for (const name of names) expect(text, name).toMatch(new RegExp(`^${name}[{ ]`, 'm'));
  });
});

describe('GET /metrics access', () => {
  let database: TestDatabase;
  let open: RunningService;
  let guarded: RunningService;

  beforeAll(async () => {
    database = await createTestDatabase();
    const definition = await loadDefinition(await buildFixture('small'));
    const env = { DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET, SVC_DB_POOL_SIZE: '4' };
    const log = pino({ level: 'silent' });
    // Listening on every interface, so that a client can reach it through a non-loopback address.
    open = await startService(definition, { env, port: 0, host: '0.0.0.0', log });
    guarded = await startService(definition, { env: { ...env, SVC_METRICS_TOKEN: TOKEN }, port: 0, host: '0.0.0.0', log });
  });
  afterAll(async () => {
    await open?.stop();
    await guarded?.stop();
    await database?.drop();
  });

  it('refuses a non-loopback peer without a token, whatever X-Forwarded-For claims', async () => {
    const remote = `http://${externalAddress()}:${open.port}`;
    const refused = await scrape(remote, { 'x-forwarded-for': '127.0.0.1' });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text).error).toMatch(/SVC_METRICS_TOKEN/);
    expect((await scrape(open.url)).status).toBe(200);
  });

  it('with SVC_METRICS_TOKEN, needs the bearer token, from anywhere', async () => {
    const remote = `http://${externalAddress()}:${guarded.port}`;
    for (const url of [guarded.url, remote]) {
      const missing = await scrape(url);
      expect(missing.status).toBe(401);
      expect(missing.text).not.toContain(TOKEN);
      expect((await scrape(url, { authorization: `Bearer ${TOKEN}x` })).status).toBe(401);
      expect((await scrape(url, { authorization: 'Bearer short' })).status).toBe(401);
      expect((await scrape(url, { authorization: `Basic ${TOKEN}` })).status).toBe(401);
      const ok = await scrape(url, { authorization: `Bearer ${TOKEN}` });
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('svc_http_requests_total');
    }
  });

  it('refuses a short SVC_METRICS_TOKEN at start, naming the variable', async () => {
    const definition = await loadDefinition(await buildFixture('small'));
    await expect(startService(definition, {
      env: { DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET, SVC_METRICS_TOKEN: 'short' }, port: 0, log: pino({ level: 'silent' }),
    })).rejects.toThrow(/SVC_METRICS_TOKEN/);
  });
});
