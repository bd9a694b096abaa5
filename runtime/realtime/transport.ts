/**
 * Cross-instance transport of the realtime tier. The tier only sees the
 * Transport interface, so a later broker (NATS, Redis) replaces this file
 * without touching the fan-out or any caller.
 *
 * This one rides Postgres NOTIFY. A payload over NOTIFY_LIMIT bytes (Postgres
 * refuses ~8000) is stored in svc_realtime_spill and the notification carries
 * `#<id>`. Sends and receipts are each processed one at a time, so one
 * instance's messages arrive everywhere in the order they were published.
 */
import type { Db, Notifier } from '../db/index.ts';
import type { Logger } from '../log/index.ts';
import { compile, sql } from '../sql/index.ts';

export const REALTIME_CHANNEL = 'svc_realtime';
const NOTIFY_LIMIT = 7_800;
const SPILL_RETAIN_SECS = 60;

export type Envelope =
  | {
      readonly kind: 'message'; readonly origin: string; readonly tenant: string | null; readonly channel: string;
      /** JSON text of the payload. */ readonly raw: string; readonly from: string | null;
    }
  | {
      readonly kind: 'join' | 'leave'; readonly origin: string; readonly tenant: string | null;
      readonly channel: string; readonly userId: string;
    };

export interface Transport {
  /** Starts hearing every instance's envelopes (its own included). */
  start(receive: (envelope: Envelope) => void): Promise<void>;
  send(envelope: Envelope): Promise<void>;
  /** Periodic housekeeping (deletes old spilled payloads). */
  sweep(): Promise<void>;
  stop(): Promise<void>;
}

export function encode(e: Envelope): string {
  return JSON.stringify(e.kind === 'message'
    ? ['m', e.origin, e.tenant, e.channel, e.raw, e.from]
    : [e.kind === 'join' ? 'j' : 'l', e.origin, e.tenant, e.channel, e.userId]);
}

export function decode(text: string): Envelope | null {
  try {
    const [kind, origin, tenant, channel, a, b] = JSON.parse(text) as [string, string, string | null, string, string, string | null];
    if (kind === 'm') return { kind: 'message', origin, tenant, channel, raw: a, from: b };
    if (kind === 'j' || kind === 'l') return { kind: kind === 'j' ? 'join' : 'leave', origin, tenant, channel, userId: a };
  } catch {
    // fall through: a foreign or corrupt notification is ignored
  }
  return null;
}

/**
 * The spill's statements, compiled once at load (a message too large for a
 * NOTIFY goes through the table); each binds one value per call, its only one.
 */
const READ_SPILL = compile(sql`select payload from svc_realtime_spill where id = ${sql.value(null)}`);
const WRITE_SPILL = compile(sql`insert into svc_realtime_spill (payload) values (${sql.value(null)}) returning id::text`);
const SWEEP_SPILL = compile(sql`
  delete from svc_realtime_spill where created_at < now() - ${sql.value(SPILL_RETAIN_SECS)} * interval '1 second'`);

export function createPgTransport(db: Db, notifier: Notifier, log: Logger): Transport {
  let unlisten: (() => Promise<void>) | null = null;
  let outbox: Promise<unknown> = Promise.resolve();
  let inbox: Promise<unknown> = Promise.resolve();

  const resolvePayload = async (payload: string): Promise<string | null> => {
    if (!payload.startsWith('#')) return payload;
    const row = await db.oneOrNone<{ payload: string }>({ text: READ_SPILL.text, values: [payload.slice(1)] });
    if (!row) log.warn({ spill: payload }, 'realtime: spilled message expired before it was read');
    return row?.payload ?? null;
  };
  const sendNow = async (text: string): Promise<void> => {
    if (Buffer.byteLength(text) <= NOTIFY_LIMIT) return notifier.notify(REALTIME_CHANNEL, text);
    const { id } = await db.one<{ id: string }>({ text: WRITE_SPILL.text, values: [text] });
    await notifier.notify(REALTIME_CHANNEL, `#${id}`);
  };

  return {
    async start(receive) {
      unlisten = await notifier.listen(REALTIME_CHANNEL, (payload) => {
        inbox = inbox.then(async () => {
          const text = await resolvePayload(payload);
          const envelope = text === null ? null : decode(text);
          if (envelope) receive(envelope);
        }).catch((err) => log.error({ err }, 'realtime: receiving a message failed'));
      });
    },
    send(envelope) {
      const text = encode(envelope);
      const sent = outbox.then(() => sendNow(text));
      outbox = sent.catch(() => undefined);
      return sent;
    },
    async sweep() {
      await db.none(SWEEP_SPILL);
    },
    async stop() {
      await outbox;
      await unlisten?.();
      unlisten = null;
    },
  };
}
