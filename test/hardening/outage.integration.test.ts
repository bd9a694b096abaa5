/**
 * A database outage is not the client's fault (issue 10, point 5): while
 * Postgres is unreachable a valid token is answered 503 with Retry-After,
 * never 401 (which would make every client log its users out).
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, queryOnce, type TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../auth/helpers.ts';
import { anyRows, isDatabaseUnavailable } from '../../runtime/db/index.ts';

/** A TCP proxy to Postgres that can cut every connection and refuse new ones. */
async function startPgProxy(target: URL) {
  const sockets = new Set<Socket>();
  let up = true;
  const server: Server = createServer((client) => {
    if (!up) return void client.destroy();
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    port: (server.address() as { port: number }).port,
    cut() {
      up = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      up = true;
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

let database: TestDatabase;
let proxy: Awaited<ReturnType<typeof startPgProxy>>;
let service: TestService;

beforeAll(async () => {
  database = await createTestDatabase();
  proxy = await startPgProxy(new URL(database.url));
  const url = new URL(database.url);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  service = await startTestService({ database: { ...database, url: url.toString() } });
});
afterAll(async () => {
  proxy?.restore();
  await service?.close();
  await proxy?.close();
  await database?.drop();
});

describe('database outage', () => {
  it('answers a valid token 503 with Retry-After, an invalid one still 401', async () => {
    const token = await service.token({ role: 'Admin', userId: 'outage-admin' });
    proxy.cut();
    const during = await call(service.url, 'GET', '/auth/me', { token });
    expect(during.status).toBe(503);
    expect(Number(during.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(during.body).toMatchObject({ code: 'UNAVAILABLE' });
    const graphql = await call(service.url, 'POST', '/graphql', { token, body: { query: '{ records(model: "Company") }' } });
    expect(graphql.status).toBe(503);
    const jobs = await call(service.url, 'GET', '/jobs/some-id', { token });
    expect(jobs.status).toBe(503);
    expect((await call(service.url, 'GET', '/auth/me', { token: 'not.a.jwt' })).status).toBe(401);
    const upgrade = await new Promise<number>((done) => {
      const ws = new WebSocket(`${service.url.replace('http', 'ws')}/realtime/ws?token=${token}`);
      ws.on('unexpected-response', (_req, res) => done(res.statusCode ?? 0));
      ws.on('error', () => undefined);
    });
    expect(upgrade).toBe(503);
    const subscription = await new Promise<number>((done) => {
      const client = createClient({
        url: `${service.url.replace('http', 'ws')}/graphql/ws`, webSocketImpl: WebSocket, connectionParams: { token },
        retryAttempts: 0, lazy: false, onNonLazyError: () => undefined, on: { closed: (event: any) => done(event.code) },
      });
      void client;
    });
    expect(subscription).not.toBe(4403);
    expect(subscription).toBe(1013);
    proxy.restore();
    const deadline = Date.now() + 10_000;
    let after = await call(service.url, 'GET', '/auth/me', { token });
    while (after.status !== 200 && Date.now() < deadline) after = await call(service.url, 'GET', '/auth/me', { token });
    expect(after.status).toBe(200);
  });

  it('a statement in flight when the connection is cut fails as unavailable, and the process carries on', async () => {
    const sleeping = anyRows(service.ctx.db, { text: `select pg_sleep(5) as "outage-in-flight"` });
    // Cut once Postgres runs it (a barrier on the server's own view, not a fixed wait).
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline) {
      const running = await queryOnce<{ n: number }>(database.url,
        `select count(*)::int as n from pg_stat_activity where query like '%outage-in-flight%' and state = 'active' and pid <> pg_backend_pid()`);
      if (running[0].n > 0) break;
    }
    proxy.cut();
    const failure = await sleeping.then(() => null, (error: unknown) => error);
    proxy.restore();
    expect(isDatabaseUnavailable(failure)).toBe(true);
    // The pool dropped the broken connection: the next statement gets a working one.
    expect(await anyRows(service.ctx.db, { text: 'select 1 as one' })).toEqual([{ one: 1 }]);
  });

  it('answers 503 with Retry-After when a statement cannot reach Postgres after authentication (a cached session)', async () => {
    const token = await service.token({ role: 'Admin', userId: 'outage-cached' });
    expect((await call(service.url, 'POST', '/graphql', { token, body: { query: '{ records(model: "Project") }' } })).status).toBe(200);
    proxy.cut();
    try {
      const read = await call(service.url, 'POST', '/graphql', { token, body: { query: '{ records(model: "Project") }' } });
      const create = await call(service.url, 'POST', '/graphql', {
        token, body: { query: 'mutation { create(model: "Project", data: {name: "Down"}) }' },
      });
      const enqueue = await call(service.url, 'POST', '/jobs', { token, body: { queue: 'outage', kind: 'k' } });
      for (const reply of [read, create, enqueue]) {
        expect(reply.status, JSON.stringify(reply.body)).toBe(503);
        expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(JSON.stringify(reply.body)).not.toMatch(/select|insert|ECONN|terminated/i);
      }
      // GraphQL keeps the codes of CONTRACT section 4; REST says UNAVAILABLE.
      for (const reply of [read, create]) {
        expect(reply.body.errors).toEqual([expect.objectContaining({ message: 'service temporarily unavailable', extensions: { code: 'INTERNAL_ERROR' } })]);
      }
      expect(enqueue.body).toMatchObject({ code: 'UNAVAILABLE' });
    } finally {
      proxy.restore();
    }
  });
});
