/**
 * A slow consumer never stalls the others: its send buffer is bounded and it
 * is closed (4008) when over it. Keepalive pings drop peers that stopped
 * answering.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { startRealtimeService } from './service.ts';
import { RtClient } from './client.ts';
import { rawConnect } from './raw-socket.ts';

let service: Awaited<ReturnType<typeof startRealtimeService>>;
let pinging: Awaited<ReturnType<typeof startRealtimeService>>;
const clients: RtClient[] = [];

async function connect(on: TestService, userId: string) {
  const client = await RtClient.connect(on.url, await on.token({ userId, role: 'Viewer' }));
  clients.push(client);
  return client;
}

beforeAll(async () => {
  service = await startRealtimeService({ env: { SVC_REALTIME_MAX_BUFFERED_BYTES: String(64 * 1024) } });
  pinging = await startRealtimeService({ database: service.database, env: { SVC_REALTIME_PING_MS: '150' } });
});

afterAll(async () => {
  for (const c of clients) c.close();
  await pinging?.close();
  await service?.close();
  await service?.drop();
});

describe('realtime: slow consumers', () => {
  it('closes a consumer that stops reading while the others get every message', async () => {
    const healthy = await connect(service, 'healthy');
    const publisher = await connect(service, 'publisher');
    await healthy.subscribe('room:flood');
    const slow = await rawConnect(service.port, await service.token({ userId: 'slow', role: 'Viewer' }));
    slow.sendText('{"op":"subscribe","channel":"room:flood"}');
    await slow.waitFor('"subscribed"');
    await healthy.next((f) => f.op === 'join' && f.userId === 'slow');
    slow.socket.pause();

    const chunk = 'z'.repeat(32 * 1024);
    let sent = 0;
    let evicted = false;
    while (!evicted && sent < 1200) { // 1200 x 32 KiB: far beyond the kernel's socket buffers
      for (let i = 0; i < 20; i++) publisher.send(`{"op":"publish","channel":"room:flood","data":{"i":${sent++},"pad":"${chunk}"}}`);
      const got = await healthy.next((f) => f.op === 'message' && f.data.i === sent - 1, 5000);
      expect(got.data.i).toBe(sent - 1);
      evicted = (await healthy.collect((f) => f.op === 'leave' && f.userId === 'slow', 0)).length > 0;
    }
    if (!evicted) await healthy.next((f) => f.op === 'leave' && f.userId === 'slow');

    slow.socket.resume();
    await slow.ended();
    // The healthy consumer kept receiving: a last message still arrives at once.
    publisher.send('{"op":"publish","channel":"room:flood","data":{"i":"last"}}');
    expect((await healthy.next((f) => f.op === 'message' && f.data.i === 'last', 1000)).from).toBe('publisher');
  });
});

describe('realtime: keepalive', () => {
  it('drops a connection that does not answer pings and keeps one that does', async () => {
    const watcher = await connect(pinging, 'watcher');
    await watcher.subscribe('room:ka');
    const dead = await rawConnect(pinging.port, await pinging.token({ userId: 'dead-peer', role: 'Viewer' }));
    dead.sendText('{"op":"subscribe","channel":"room:ka"}');
    await dead.waitFor('"subscribed"');
    await dead.ended();
    expect(await watcher.next((f) => f.op === 'leave')).toEqual({ op: 'leave', channel: 'room:ka', userId: 'dead-peer' });
    await new Promise((r) => setTimeout(r, 500));
    expect(watcher.closed).toBeNull();
    watcher.send({ op: 'ping' });
    expect(await watcher.next((f) => f.op === 'pong')).toEqual({ op: 'pong' });
  });
});
