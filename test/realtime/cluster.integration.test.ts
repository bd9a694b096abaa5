/**
 * Two server instances on one database form one realtime tier: messages,
 * joins, leaves and presence cross instances through Postgres NOTIFY, large
 * payloads through the spill table, tenants stay apart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import type { TestService } from '../helpers/service.ts';
import { startRealtimeService } from './service.ts';
import { RtClient } from './client.ts';

let first: Awaited<ReturnType<typeof startRealtimeService>>;
let second: Awaited<ReturnType<typeof startRealtimeService>>;
const clients: RtClient[] = [];

async function connect(on: TestService, userId: string, tenantId: string | null = 'tc') {
  const client = await RtClient.connect(on.url, await on.token({ userId, role: 'Viewer', tenantId }));
  clients.push(client);
  return client;
}

beforeAll(async () => {
  first = await startRealtimeService();
  second = await startRealtimeService({ database: first.database });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await second?.close();
  await first?.close();
  await first?.drop();
});

describe('realtime cluster: two instances, one tier', () => {
  it('delivers a publish on one instance to subscribers on the other', async () => {
    const onA = await connect(first, 'a1');
    const onB = await connect(second, 'b1');
    await onA.subscribe('room:x');
    await onB.subscribe('room:x');
    onA.send({ op: 'publish', channel: 'room:x', data: { hello: 'from A' } });
    expect(await onB.next((f) => f.op === 'message')).toEqual({ op: 'message', channel: 'room:x', data: { hello: 'from A' }, from: 'a1' });
    await first.ctx.services.realtime.publish('tc', 'room:x', 'server on A');
    expect((await onB.next((f) => f.op === 'message')).data).toBe('server on A');
    expect((await onA.next((f) => f.op === 'message')).data).toBe('server on A');
  });

  it('carries payloads over the NOTIFY limit (spill table), unchanged and in order', async () => {
    const onA = await connect(first, 'a2');
    const onB = await connect(second, 'b2');
    await onB.subscribe('room:big');
    const big = `{"blob":"${'y'.repeat(30_000)}","n":1.0}`;
    onA.send(`{"op":"publish","channel":"room:big","data":0}`);
    onA.send(`{"op":"publish","channel":"room:big","data":${big}}`);
    onA.send(`{"op":"publish","channel":"room:big","data":2}`);
    const got = [await onB.nextRaw((f) => f.op === 'message'), await onB.nextRaw((f) => f.op === 'message'),
      await onB.nextRaw((f) => f.op === 'message')];
    expect(got[0].frame.data).toBe(0);
    expect(got[1].raw).toContain(`"data":${big}`);
    expect(got[2].frame.data).toBe(2);
  });

  it('keeps tenants apart across instances', async () => {
    const t1 = await connect(first, 'ta', 'cluster-t1');
    const t2 = await connect(second, 'tb', 'cluster-t2');
    const t1b = await connect(second, 'tc', 'cluster-t1');
    await t1.subscribe('room:1');
    await t2.subscribe('room:1');
    await t1b.subscribe('room:1');
    t1.send({ op: 'publish', channel: 'room:1', data: 'only t1' });
    expect((await t1b.next((f) => f.op === 'message')).data).toBe('only t1');
    expect(await t2.collect((f) => f.op === 'message' || f.op === 'join', 250)).toEqual([]);
  });

  it('announces joins and leaves across instances and aggregates presence', async () => {
    const onA = await connect(first, 'pa');
    await onA.subscribe('room:p');
    const onB = await connect(second, 'pb');
    await onB.subscribe('room:p');
    expect(await onA.next((f) => f.op === 'join')).toEqual({ op: 'join', channel: 'room:p', userId: 'pb' });

    onA.send({ op: 'presence', channel: 'room:p' });
    const members = (await onA.next((f) => f.op === 'presence')).members.map((m: { userId: string }) => m.userId);
    expect(members.sort()).toEqual(['pa', 'pb']);

    // The same user on both instances is one member, and leaves only when gone from both.
    const pbOnA = await connect(first, 'pb');
    await pbOnA.subscribe('room:p');
    expect(await onA.collect((f) => f.op === 'join', 200)).toEqual([]);
    onB.close();
    expect(await onA.collect((f) => f.op === 'leave', 300)).toEqual([]);
    pbOnA.close();
    expect(await onA.next((f) => f.op === 'leave')).toEqual({ op: 'leave', channel: 'room:p', userId: 'pb' });
  });

  it('deletes old spilled payloads', async () => {
    const client = new pg.Client({ connectionString: first.database.url });
    await client.connect();
    try {
      await client.query(`insert into svc_realtime_spill (payload, created_at) values ('old', now() - interval '10 minutes')`);
      await (first.ctx.services.realtime as unknown as { heartbeat(): Promise<void> }).heartbeat();
      const { rows } = await client.query(`select count(*)::int as n from svc_realtime_spill where payload = 'old'`);
      expect(rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });
});

describe('realtime cluster: an instance that stops', () => {
  it('announces the leaves of its users when it stops gracefully', async () => {
    const third = await startRealtimeService({ database: first.database });
    const watcher = await connect(first, 'watcher');
    await watcher.subscribe('room:stop');
    const leaving = await RtClient.connect(third.url, await third.token({ userId: 'leaver', role: 'Viewer', tenantId: 'tc' }));
    await leaving.subscribe('room:stop');
    await watcher.next((f) => f.op === 'join');
    await third.stop();
    expect((await leaving.waitClosed()).code).toBe(1001);
    expect(await watcher.next((f) => f.op === 'leave')).toEqual({ op: 'leave', channel: 'room:stop', userId: 'leaver' });
    watcher.send({ op: 'presence', channel: 'room:stop' });
    expect((await watcher.next((f) => f.op === 'presence')).members.map((m: { userId: string }) => m.userId)).toEqual(['watcher']);
  });
});
