/**
 * Notifications between server instances, through Postgres: rare control
 * messages (session revocation), the change feed's wake-up hints and the
 * realtime tier's default transport. Model and job changes never ride them:
 * the change feed reads the event log (ADR 010).
 *
 * One interface, two implementations: LISTEN on a dedicated connection of a
 * real server; in embedded mode LISTEN and NOTIFY as statements of the one
 * pooled connection (embedded.ts). Notifications sent with
 * `pg_notify` inside a transaction are delivered on commit, never before.
 * Payloads over ~8000 bytes are refused by Postgres: callers send a reference.
 */
import type pg from 'pg';
import { compile, sql } from '../sql/index.ts';

/**
 * Every realtime message and session change goes through it: compiled once
 * at load; a call binds its channel and payload, in this order.
 */
export const NOTIFY = compile(sql`select pg_notify(${sql.value('channel', 'text')}, ${sql.value('payload', 'text')})`);

export type NotificationHandler = (payload: string) => void;

export interface Notifier {
  /** Resolves once the LISTEN is active; returns the unsubscribe function. */
  listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>>;
  /** Sends outside any transaction (inside one, run `select pg_notify(...)` on it). */
  notify(channel: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

/** Shared bookkeeping: channel -> handlers, and one LISTEN per channel. */
export class HandlerRegistry {
  private readonly handlers = new Map<string, Set<NotificationHandler>>();

  add(channel: string, handler: NotificationHandler): boolean {
    let set = this.handlers.get(channel);
    const first = !set;
    if (!set) this.handlers.set(channel, (set = new Set()));
    set.add(handler);
    return first;
  }

  remove(channel: string, handler: NotificationHandler): boolean {
    const set = this.handlers.get(channel);
    if (!set) return false;
    set.delete(handler);
    if (set.size > 0) return false;
    this.handlers.delete(channel);
    return true;
  }

  channels(): string[] {
    return [...this.handlers.keys()];
  }

  dispatch(channel: string, payload: string): void {
    for (const handler of this.handlers.get(channel) ?? []) {
      try {
        handler(payload);
      } catch {
        // A failing subscriber must not stop delivery to the others.
      }
    }
  }
}

export function quoteChannel(channel: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(channel)) throw new Error(`invalid notification channel: ${channel}`);
  return sql.text(sql.ident(channel));
}

/** The client class: pg-promise's own copy of pg (`pgp.pg.Client`), so that the runtime loads one pg, not two. */
export type ClientClass = new (config: { connectionString: string; application_name: string }) => pg.Client;

/** Real server: one dedicated client, reconnected with backoff if it drops. */
export function createPgNotifier(url: string, Client: ClientClass): Notifier {
  const registry = new HandlerRegistry();
  let client: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  let reconnectTimer: NodeJS.Timeout | null = null;
  let closed = false;
  let retryDelay = 100;

  const connect = async (): Promise<pg.Client> => {
    const next = new Client({ connectionString: url, application_name: 'svc-gen-listener' });
    next.on('notification', (msg) => registry.dispatch(msg.channel, msg.payload ?? ''));
    next.on('error', () => undefined);
    let live = false;
    next.on('end', () => {
      if (client === next) client = null;
      // A connection that never became the live one is retried by its caller.
      if (live && !closed && registry.channels().length > 0) scheduleReconnect();
    });
    try {
      await next.connect();
      for (const channel of registry.channels()) await next.query(`LISTEN ${quoteChannel(channel)}`);
      // close() may have run while this connection was being opened: it must not outlive it.
      if (closed) throw new Error('notifier closed');
    } catch (error) {
      await next.end().catch(() => undefined);
      throw error;
    }
    live = true;
    retryDelay = 100;
    client = next;
    return next;
  };
  const ensure = (): Promise<pg.Client> => {
    if (closed) return Promise.reject(new Error('notifier closed'));
    if (client) return Promise.resolve(client);
    connecting ??= connect().finally(() => (connecting = null));
    return connecting;
  };
  const scheduleReconnect = () => {
    if (closed || reconnectTimer) return;
    const delay = retryDelay;
    retryDelay = Math.min(retryDelay * 2, 5000);
    reconnectTimer = setTimeout(() => {
      reconnectTimer = null;
      if (!closed && !client) ensure().catch(scheduleReconnect);
    }, delay);
    reconnectTimer.unref();
  };

  return {
    async listen(channel, handler) {
      const first = registry.add(channel, handler);
      const c = await ensure();
      if (first) await c.query(`LISTEN ${quoteChannel(channel)}`);
      return async () => {
        if (registry.remove(channel, handler) && client) {
          await client.query(`UNLISTEN ${quoteChannel(channel)}`).catch(() => undefined);
        }
      };
    },
    async notify(channel, payload) {
      const c = await ensure();
      await c.query(NOTIFY.text, [channel, payload]);
    },
    async close() {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      reconnectTimer = null;
      const c = client;
      client = null;
      // An attempt in flight ends its own connection once it sees `closed`.
      await Promise.all([c?.end().catch(() => undefined), connecting?.catch(() => undefined)]);
    },
  };
}
