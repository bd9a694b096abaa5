/**
 * The realtime tier's Transport over Redis pub/sub (SVC_BUS_URL=redis://...):
 * one connection publishes, one subscribes. Redis keeps one publisher's
 * messages in order and has no small payload limit, so nothing spills.
 *
 * Ephemeral fan-out only: the durable change feed never rides this bus (it
 * reads the event log, ADR 010). Instances sharing a database form one tier,
 * so the channel is named after the database: two services on one Redis with
 * different databases never meet.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from '../log/index.ts';
import { decode, encode, type Envelope, type Transport } from './transport.ts';

export interface RedisTransportOptions {
  /** redis:// or rediss:// URL (SVC_BUS_URL). */
  readonly url: string;
  /** What instances of one tier share: the database they use. */
  readonly tier: string;
  readonly log: Logger;
}

export function redisChannel(tier: string): string {
  return `svc:realtime:${createHash('sha1').update(tier).digest('hex').slice(0, 16)}`;
}

export function createRedisTransport(options: RedisTransportOptions): Transport {
  const channel = redisChannel(options.tier);
  const connect = (name: string) => {
    const client = new Redis(options.url, { connectionName: name, lazyConnect: true, maxRetriesPerRequest: null });
    client.on('error', (err) => options.log.warn({ err: err.message, connection: name }, 'realtime: redis connection error'));
    return client;
  };
  const publisher = connect('svc-realtime-pub');
  const subscriber = connect('svc-realtime-sub');
  let outbox: Promise<unknown> = Promise.resolve();
  return {
    async start(receive) {
      subscriber.on('message', (from, text) => {
        if (from !== channel) return;
        const envelope = decode(text);
        if (envelope) receive(envelope);
      });
      await Promise.all([publisher.connect(), subscriber.connect()]);
      await subscriber.subscribe(channel);
    },
    send(envelope: Envelope) {
      const text = encode(envelope);
      const sent = outbox.then(() => publisher.publish(channel, text));
      outbox = sent.catch(() => undefined);
      return sent.then(() => undefined);
    },
    async sweep() {
      // Nothing to sweep: no payload is stored.
    },
    async stop() {
      await outbox;
      await Promise.allSettled([subscriber.quit(), publisher.quit()]);
    },
  };
}
