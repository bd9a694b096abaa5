/**
 * /realtime/ws on one instance: authentication, the frames of CONTRACT
 * section 6, tenant scoping, guarded job channels, presence, and that nothing
 * reaches the event log.
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { TestService } from '../helpers/service.ts';
import { startRealtimeService } from './service.ts';
import { RtClient, realtimeUrl } from './client.ts';

let service: Awaited<ReturnType<typeof startRealtimeService>>;
const clients: RtClient[] = [];

async function connect(userId: string, opts: { tenantId?: string | null; role?: 'Admin' | 'Viewer'; query?: Record<string, string> } = {}) {
  const token = await service.token({ userId, role: opts.role ?? 'Viewer', tenantId: opts.tenantId ?? null });
  const client = await RtClient.connect(service.url, token, opts.query);
  clients.push(client);
  return client;
}

/** Status line of an upgrade attempt (the refusal comes before any handshake). */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url.replace(/^ws/, 'http'), {
      headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', ...headers },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: '' });
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  service = await startRealtimeService({ env: { SVC_REALTIME_MAX_FRAME_BYTES: '4096' } });
  service.ctx.services.realtime.guardChannels('private:', async (principal, _tenant, channel) =>
    principal.role === 'Admin' || (channel === 'private:p1' && principal.userId === 'owner'));
});

afterAll(async () => {
  for (const c of clients) c.close();
  await service?.close();
  await service?.drop();
});

describe('realtime: admission', () => {
  it('refuses an upgrade without a token with 401 before the handshake', async () => {
    const res = await upgradeStatus(`${service.url}/realtime/ws`);
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body)).toEqual({ error: 'authentication required', code: 'UNAUTHORIZED' });
  });

  it('refuses an invalid or foreign-signed token with 401', async () => {
    expect((await upgradeStatus(realtimeUrl(service.url, 'not.a.jwt'))).status).toBe(401);
    // Flip a character inside the signature: the last one may only carry padding bits.
    const token = await service.token({ role: 'Admin' });
    const at = token.length - 10;
    const forged = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1);
    expect((await upgradeStatus(realtimeUrl(service.url, forged))).status).toBe(401);
  });

  it('refuses a tenant-bound user naming another tenant with 403', async () => {
    const token = await service.token({ userId: 'u', role: 'Viewer', tenantId: 't1' });
    expect((await upgradeStatus(realtimeUrl(service.url, token, { tenant: 't2' }))).status).toBe(403);
    expect((await upgradeStatus(realtimeUrl(service.url, token), { 'X-Tenant-ID': 't2' })).status).toBe(403);
  });

  it('refuses a tenant-less user that is not an Admin naming a tenant with 403 (CONTRACT section 8)', async () => {
    const token = await service.token({ userId: 'self-registered', role: 'Viewer', tenantId: null });
    expect((await upgradeStatus(realtimeUrl(service.url, token, { tenant: 't1' }))).status).toBe(403);
    expect((await upgradeStatus(realtimeUrl(service.url, token), { 'X-Tenant-ID': 't1' })).status).toBe(403);
  });

  it('accepts a valid token', async () => {
    const client = await connect('someone');
    client.send({ op: 'ping' });
    expect(await client.next()).toEqual({ op: 'pong' });
  });
});

describe('realtime: publish and subscribe', () => {
  it('delivers to subscribers with from = userId, without echo to the publisher', async () => {
    const alice = await connect('alice');
    const bob = await connect('bob');
    await alice.subscribe('room:pub');
    await bob.subscribe('room:pub');
    bob.send({ op: 'publish', channel: 'room:pub', data: { text: 'hi' } });
    expect(await alice.next((f) => f.op === 'message')).toEqual({ op: 'message', channel: 'room:pub', data: { text: 'hi' }, from: 'bob' });
    expect(await bob.collect((f) => f.op === 'message', 200)).toEqual([]);
  });

  it('passes payloads through byte for byte', async () => {
    const alice = await connect('alice2');
    const bob = await connect('bob2');
    await alice.subscribe('room:opaque');
    const data = '{"big":12345678901234567890,"f":1.0,"s":"\\u00e9","nested":[{"x":null}]}';
    bob.send(`{"op":"publish","channel":"room:opaque","data":${data}}`);
    const got = await alice.nextRaw((f) => f.op === 'message');
    expect(got.raw).toContain(`"data":${data}`);
  });

  it('stops delivering after unsubscribe', async () => {
    const alice = await connect('alice3');
    const bob = await connect('bob3');
    await alice.subscribe('room:unsub');
    alice.send({ op: 'unsubscribe', channel: 'room:unsub' });
    alice.send({ op: 'ping' });
    await alice.next((f) => f.op === 'pong');
    bob.send({ op: 'publish', channel: 'room:unsub', data: 1 });
    expect(await alice.collect((f) => f.op === 'message', 250)).toEqual([]);
  });

  it('delivers server publishes (ctx.services.realtime) with from null', async () => {
    const alice = await connect('alice4', { tenantId: 'tA' });
    await alice.subscribe('room:server');
    await service.ctx.services.realtime.publish('tA', 'room:server', { n: 1 });
    expect(await alice.next((f) => f.op === 'message')).toEqual({ op: 'message', channel: 'room:server', data: { n: 1 }, from: null });
  });
});

describe('realtime: tenant scoping', () => {
  it('keeps two tenants\' room:1 apart', async () => {
    const t1 = await connect('u-t1', { tenantId: 't1' });
    const t2 = await connect('u-t2', { tenantId: 't2' });
    const t1b = await connect('u-t1b', { tenantId: 't1' });
    for (const c of [t1, t2, t1b]) await c.subscribe('room:1');
    t1b.send({ op: 'publish', channel: 'room:1', data: 'for t1' });
    expect((await t1.next((f) => f.op === 'message')).data).toBe('for t1');
    expect(await t2.collect((f) => f.op === 'message' || f.op === 'join', 250)).toEqual([]);
  });

  it('lets a user without tenant pick one with ?tenant= or X-Tenant-ID', async () => {
    const member = await connect('u-t3', { tenantId: 't3' });
    const admin = await connect('platform-admin', { role: 'Admin', query: { tenant: 't3' } });
    const global = await connect('global-user');
    await member.subscribe('room:pick');
    await global.subscribe('room:pick');
    admin.send({ op: 'publish', channel: 'room:pick', data: 'hello t3' });
    expect((await member.next((f) => f.op === 'message')).from).toBe('platform-admin');
    expect(await global.collect((f) => f.op === 'message', 200)).toEqual([]);
  });
});

describe('realtime: error frames', () => {
  it('answers each bad frame with an error frame and keeps the connection', async () => {
    const c = await connect('errors');
    const cases: Array<[string, string]> = [
      ['{"op":"fly","channel":"a"}', 'unknown_op'],
      ['{not json', 'malformed_json'],
      ['{"op":"subscribe"}', 'missing_channel'],
      ['{"op":"publish","channel":"a"}', 'missing_data'],
      [`{"op":"publish","channel":"a","data":"${'x'.repeat(5000)}"}`, 'frame_too_large'],
      ['{"op":"unsubscribe","channel":"never"}', 'not_subscribed'],
      ['[]', 'invalid_frame'],
    ];
    for (const [frame, code] of cases) {
      c.send(frame);
      const error = await c.next();
      expect(error).toMatchObject({ op: 'error', code });
      expect(typeof error.message).toBe('string');
    }
    c.send({ op: 'ping' });
    expect(await c.next()).toEqual({ op: 'pong' });
  });

  it('closes (1009) on a frame far above the limit', async () => {
    const c = await connect('huge');
    c.send(`{"op":"publish","channel":"a","data":"${'x'.repeat(20_000)}"}`);
    expect((await c.waitClosed()).code).toBe(1009);
  });
});

describe('realtime: guarded channels', () => {
  it('lets only the guard\'s choice subscribe or ask presence', async () => {
    const stranger = await connect('stranger');
    stranger.send({ op: 'subscribe', channel: 'private:p1' });
    expect(await stranger.next()).toMatchObject({ op: 'error', code: 'forbidden', channel: 'private:p1' });
    stranger.send({ op: 'presence', channel: 'private:p1' });
    expect(await stranger.next()).toMatchObject({ op: 'error', code: 'forbidden' });

    const owner = await connect('owner');
    const admin = await connect('admin', { role: 'Admin' });
    await owner.subscribe('private:p1');
    await admin.subscribe('private:p1');
    const progress = { jobId: 'p1', percent: 50, message: 'half', data: { step: 2 } };
    await service.ctx.services.realtime.publish(null, 'private:p1', progress);
    expect(await owner.next((f) => f.op === 'message')).toEqual({ op: 'message', channel: 'private:p1', data: progress, from: null });
    expect((await admin.next((f) => f.op === 'message')).data).toEqual(progress);
  });

  it('refuses client publishes on a guarded channel', async () => {
    const owner = await connect('owner');
    const watcher = await connect('watcher-admin', { role: 'Admin' });
    await watcher.subscribe('private:p1');
    owner.send({ op: 'publish', channel: 'private:p1', data: { percent: 100 } });
    expect(await owner.next((f) => f.op === 'error')).toMatchObject({ code: 'forbidden' });
    expect(await watcher.collect((f) => f.op === 'message', 200)).toEqual([]);
  });

  it('gates job:{id} with the jobs capability\'s guard', async () => {
    const stranger = await connect('job-stranger');
    stranger.send({ op: 'subscribe', channel: 'job:01JOBTHATDOESNOTEXIST00000' });
    expect(await stranger.next()).toMatchObject({ op: 'error', code: 'forbidden' });
  });
});

describe('realtime: presence', () => {
  it('announces join and leave and lists members', async () => {
    const ann = await connect('ann', { tenantId: 'tp' });
    const ben = await connect('ben', { tenantId: 'tp' });
    await ann.subscribe('room:presence');
    await ben.subscribe('room:presence');
    expect(await ann.next((f) => f.op === 'join')).toEqual({ op: 'join', channel: 'room:presence', userId: 'ben' });
    expect(await ben.collect((f) => f.op === 'join', 100)).toEqual([]); // no self-join

    ann.send({ op: 'presence', channel: 'room:presence' });
    const presence = await ann.next((f) => f.op === 'presence');
    expect(presence.members.map((m: { userId: string }) => m.userId).sort()).toEqual(['ann', 'ben']);
    for (const m of presence.members) expect(new Date(m.joinedAt).toISOString()).toBe(m.joinedAt);

    ben.send({ op: 'unsubscribe', channel: 'room:presence' });
    expect(await ann.next((f) => f.op === 'leave')).toEqual({ op: 'leave', channel: 'room:presence', userId: 'ben' });
    await ben.subscribe('room:presence');
    await ann.next((f) => f.op === 'join');
    ben.close();
    expect(await ann.next((f) => f.op === 'leave')).toMatchObject({ userId: 'ben' });
    ann.send({ op: 'presence', channel: 'room:presence' });
    expect((await ann.next((f) => f.op === 'presence')).members.map((m: { userId: string }) => m.userId)).toEqual(['ann']);
  });

  it('counts a user with two connections once', async () => {
    const watcher = await connect('watch', { tenantId: 'tq' });
    await watcher.subscribe('room:twice');
    const tab1 = await connect('carl', { tenantId: 'tq' });
    const tab2 = await connect('carl', { tenantId: 'tq' });
    await tab1.subscribe('room:twice');
    await tab2.subscribe('room:twice');
    expect(await watcher.collect((f) => f.op === 'join', 200)).toHaveLength(1);
    tab1.close();
    expect(await watcher.collect((f) => f.op === 'leave', 200)).toEqual([]);
    tab2.close();
    expect(await watcher.next((f) => f.op === 'leave')).toMatchObject({ userId: 'carl' });
  });
});

describe('realtime: session lifetime', () => {
  it('closes (4001) the connections of a session that logs out, and only those', async () => {
    const token = await service.token({ userId: 'leaving-user', role: 'Viewer' });
    const other = await connect('leaving-user');
    const leaving = await RtClient.connect(service.url, token);
    clients.push(leaving);
    await leaving.subscribe('room:logout');
    const res = await fetch(`${service.url}/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBeLessThan(300);
    expect(await leaving.waitClosed()).toEqual({ code: 4001, reason: 'session revoked' });
    other.send({ op: 'ping' });
    expect(await other.next()).toEqual({ op: 'pong' });
  });
});

describe('realtime: never event-sourced', () => {
  it('writes nothing to the event log', async () => {
    const a = await connect('log-a');
    const b = await connect('log-b');
    await a.subscribe('room:log');
    await b.subscribe('room:log');
    b.send({ op: 'publish', channel: 'room:log', data: { x: 1 } });
    await a.next((f) => f.op === 'message');
    await service.ctx.services.realtime.publish(null, 'room:log', 'server');
    const client = new pg.Client({ connectionString: service.database.url });
    await client.connect();
    try {
      const { rows } = await client.query(`select count(*)::int as n from svc_events`);
      expect(rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });
});
