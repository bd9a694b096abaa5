/**
 * A publish answered with an error frame was delivered nowhere (issue 10,
 * point 7): the message goes to the other instances first and is delivered
 * on this one only once that succeeded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { startRealtimeService } from './service.ts';
import { RtClient } from './client.ts';

let service: TestService & { drop(): Promise<void> };
const clients: RtClient[] = [];

beforeAll(async () => {
  service = await startRealtimeService({ env: { SVC_REALTIME_MAX_FRAME_BYTES: '65536' } });
});
afterAll(async () => {
  for (const c of clients) c.close();
  await service?.close();
  await service?.drop();
});

async function connect(userId: string): Promise<RtClient> {
  const client = await RtClient.connect(service.url, await service.token({ userId, role: 'Viewer' }));
  clients.push(client);
  return client;
}

describe('realtime publish failure', () => {
  it('delivers nothing, even on the publisher\'s own instance, when the publish is answered with an error frame', async () => {
    const publisher = await connect('pub');
    const listener = await connect('sub');
    await publisher.subscribe('room:spill');
    await listener.subscribe('room:spill');
    // A message above the NOTIFY payload limit is spilled to a table; without the table the publish fails.
    await service.ctx.db.none('alter table svc_realtime_spill rename to svc_realtime_spill_away');
    try {
      publisher.send({ op: 'publish', channel: 'room:spill', data: 'x'.repeat(10_000) });
      expect(await publisher.next((f) => f.op === 'error')).toMatchObject({ op: 'error', code: 'unavailable' });
    } finally {
      await service.ctx.db.none('alter table svc_realtime_spill_away rename to svc_realtime_spill');
    }
    publisher.send({ op: 'publish', channel: 'room:spill', data: 'after' });
    // Frames of one publisher are handled in order: had the failed one been delivered, it would come first.
    expect((await listener.next((f) => f.op === 'message')).data).toBe('after');
  });
});
