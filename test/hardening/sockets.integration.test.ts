/**
 * Sockets follow the session (issue 10, point 4): a graphql-ws socket is
 * closed (4001) on logout and when its user is disabled; a role downgrade
 * applies to the next change delivered; both kinds of socket close (4001)
 * when the access token expires; one socket holds a bounded number of subscriptions.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenSigner, type Principal } from '../../runtime/auth/index.ts';
import type { Role } from '../../runtime/ir/types.ts';
import { mintToken, TEST_JWT_SECRET, type TestService } from '../helpers/service.ts';
import { call } from '../auth/helpers.ts';
import { clientFor, create, startRecordsService } from '../records/helpers.ts';

let service: TestService;
const clients: Client[] = [];

beforeAll(async () => {
  service = await startRecordsService({ env: { SVC_GRAPHQL_MAX_SUBSCRIPTIONS: '3' } });
});
afterAll(async () => {
  for (const c of clients) await c.dispose();
  await service?.close();
});

interface Socket {
  readonly client: Client;
  readonly changes: Array<{ modelName: string; recordId: string }>;
  readonly errors: any[];
  readonly closed: Promise<{ code: number; reason: string }>;
}

async function open(token: string, queries: string[] = ['subscription { modelChanges { modelName recordId } }']): Promise<Socket> {
  let onClosed!: (event: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((done) => (onClosed = done));
  const client = createClient({
    url: `${service.url.replace('http', 'ws')}/graphql/ws`, webSocketImpl: WebSocket, connectionParams: { token },
    retryAttempts: 0, lazy: false, onNonLazyError: () => undefined,
    on: { closed: (event: any) => onClosed({ code: event.code, reason: event.reason }) },
  });
  clients.push(client);
  const socket: Socket = { client, changes: [], errors: [], closed };
  for (const query of queries) {
    client.subscribe({ query }, {
      next: (m) => (m.errors ? socket.errors.push(...m.errors) : socket.changes.push(m.data!.modelChanges as any)),
      error: (e) => socket.errors.push(e), complete: () => undefined,
    });
  }
  await new Promise<void>((done) => client.on('connected', () => done()));
  return socket;
}

async function until<T>(probe: () => T | Promise<T>, ok: (value: T) => boolean, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  let value = await probe();
  while (!ok(value) && Date.now() < deadline) {
    await new Promise((done) => setTimeout(done, 25));
    value = await probe();
  }
  return value;
}

/** A change this socket will see: proves the socket is live and subscribed. */
async function delivered(socket: Socket, writer: Awaited<ReturnType<typeof clientFor>>): Promise<void> {
  const marker = await create(writer, 'Company', { name: `Marker ${Date.now()}` });
  await until(() => socket.changes.some((c) => c.recordId === marker.id), (seen) => seen);
}

function token(p: Partial<Principal> & { role: Role }, ttlSecs = 3600) {
  return mintToken(service.ctx.db, new TokenSigner(TEST_JWT_SECRET, ttlSecs), p);
}

describe('graphql-ws sockets follow the session', () => {
  it('closes with 4001 on logout', async () => {
    const t = await token({ role: 'Manager', userId: 'ws-logout' });
    const socket = await open(t);
    expect((await call(service.url, 'POST', '/auth/logout', { token: t })).status).toBe(204);
    expect(await socket.closed).toEqual({ code: 4001, reason: 'session revoked' });
  });

  it('closes with 4001 when the user is disabled, and stops delivering to it', async () => {
    const t = await token({ role: 'Manager', userId: 'ws-disabled' });
    const socket = await open(t);
    const admin = await service.token({ role: 'Admin', userId: 'ws-admin' });
    expect((await call(service.url, 'PATCH', '/auth/users/ws-disabled', { token: admin, body: { disabled: true } })).status).toBe(200);
    expect((await socket.closed).code).toBe(4001);
  });

  it('applies a role downgrade to the next change delivered', async () => {
    const t = await token({ role: 'Manager', userId: 'ws-downgrade' });
    const socket = await open(t);
    const writer = await clientFor(service, { role: 'Manager', userId: 'ws-writer' });
    const before = await create(writer, 'Secret', { label: 'seen' });
    await until(() => socket.changes.some((c) => c.recordId === before.id), (seen) => seen);
    const admin = await service.token({ role: 'Admin', userId: 'ws-admin' });
    expect((await call(service.url, 'PATCH', '/auth/users/ws-downgrade', { token: admin, body: { role: 'Viewer' } })).status).toBe(200);
    // The downgrade reaches the socket asynchronously: wait for a round in which a Secret is no longer delivered.
    const rounds = await until(async () => {
      const secret = await create(writer, 'Secret', { label: 'hidden?' });
      await delivered(socket, writer);
      return socket.changes.some((c) => c.recordId === secret.id);
    }, (secretSeen) => !secretSeen);
    expect(rounds).toBe(false);
    const after = await create(writer, 'Secret', { label: 'hidden' });
    await delivered(socket, writer);
    expect(socket.changes.some((c) => c.recordId === after.id)).toBe(false);
  });

  it('closes with 4001 when the access token expires', async () => {
    const socket = await open(await token({ role: 'Viewer', userId: 'ws-expiring' }, 1));
    expect(await socket.closed).toEqual({ code: 4001, reason: 'token expired' });
  });

  it('holds at most SVC_GRAPHQL_MAX_SUBSCRIPTIONS subscriptions per socket', async () => {
    const query = 'subscription { modelChanges(model: "Company") { modelName recordId } }';
    const socket = await open(await token({ role: 'Viewer', userId: 'ws-many' }), [query, query, query, query, query]);
    await until(() => socket.errors.length, (n) => n >= 2);
    expect(socket.errors).toHaveLength(2);
    expect(socket.errors[0].message ?? socket.errors[0][0]?.message).toMatch(/at most 3 subscriptions/);
  });
});

describe('realtime sockets', () => {
  it('close with 4001 when the access token expires', async () => {
    const t = await token({ role: 'Viewer', userId: 'rt-expiring' }, 1);
    const ws = new WebSocket(`${service.url.replace('http', 'ws')}/realtime/ws?token=${t}`);
    const closed = await new Promise<{ code: number; reason: string }>((done) =>
      ws.on('close', (code, reason) => done({ code, reason: reason.toString() })));
    expect(closed).toEqual({ code: 4001, reason: 'token expired' });
  });
});
