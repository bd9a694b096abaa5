/**
 * The realtime tier over Redis (SVC_BUS_URL): two instances on one database
 * and the local Redis server form one tier; the fan-out rides Redis pub/sub
 * (not NOTIFY), large payloads pass unchanged, tenants stay apart.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisChannel } from '../../runtime/realtime/redis.ts';
import type { TestService } from '../helpers/service.ts';
import { RtClient } from './client.ts';
import { startRealtimeService } from './service.ts';

const BUS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

let first: Awaited<ReturnType<typeof startRealtimeService>>;
let second: Awaited<ReturnType<typeof startRealtimeService>>;
let redis: Redis;
const clients: RtClient[] = [];

async function connect(on: TestService, userId: string, tenantId: string | null = 'tr') {
  const client = await RtClient.connect(on.url, await on.token({ userId, role: 'Viewer', tenantId }));
  clients.push(client);
  return client;
}

beforeAll(async () => {
  first = await startRealtimeService({ env: { SVC_BUS_URL: BUS_URL } });
  second = await startRealtimeService({ database: first.database, env: { SVC_BUS_URL: BUS_URL } });
  redis = new Redis(BUS_URL);
});
afterAll(async () => {
  for (const c of clients) c.close();
  await redis?.quit();
  await second?.close();
  await first?.close();
  await first?.drop();
});

describe('realtime over Redis', () => {
  it('both instances subscribe to the channel of their database on Redis', async () => {
    const url = new URL(first.database.url);
    const channel = redisChannel(`${url.hostname}:${url.port || '5432'}${url.pathname}`);
    const [, subscribers] = (await redis.pubsub('NUMSUB', channel)) as [string, number];
    expect(subscribers).toBe(2);
  });

  it('delivers a publish on one instance to subscribers on the other, in order, large payloads unchanged', async () => {
    const onA = await connect(first, 'ra');
    const onB = await connect(second, 'rb');
    await onA.subscribe('room:r');
    await onB.subscribe('room:r');
    const big = `{"blob":"${'z'.repeat(50_000)}"}`;
    onA.send(`{"op":"publish","channel":"room:r","data":1}`);
    onA.send(`{"op":"publish","channel":"room:r","data":${big}}`);
    onA.send(`{"op":"publish","channel":"room:r","data":3}`);
    const got = [await onB.nextRaw((f) => f.op === 'message'), await onB.nextRaw((f) => f.op === 'message'),
      await onB.nextRaw((f) => f.op === 'message')];
    expect(got[0].frame).toEqual({ op: 'message', channel: 'room:r', data: 1, from: 'ra' });
    expect(got[1].raw).toContain(`"data":${big}`);
    expect(got[2].frame.data).toBe(3);
    // Nothing went through Postgres: no payload was spilled there.
    expect(await first.ctx.db.one('select count(*)::int as n from svc_realtime_spill')).toEqual({ n: 0 });
  });

  it('keeps tenants apart and carries joins across instances', async () => {
    const t1 = await connect(first, 'x1', 'redis-t1');
    const t2 = await connect(second, 'x2', 'redis-t2');
    await t1.subscribe('room:1');
    await t2.subscribe('room:1');
    const t1b = await connect(second, 'x3', 'redis-t1');
    await t1b.subscribe('room:1');
    expect(await t1.next((f) => f.op === 'join')).toEqual({ op: 'join', channel: 'room:1', userId: 'x3' });
    t1.send({ op: 'publish', channel: 'room:1', data: 'only t1' });
    expect((await t1b.next((f) => f.op === 'message')).data).toBe('only t1');
    expect(await t2.collect((f) => f.op === 'message' || f.op === 'join', 250)).toEqual([]);
  });
});
