/**
 * The realtime tier of one instance: the RealtimeBus other capabilities use,
 * and joins, leaves and presence for connections. It delivers to this
 * instance's subscribers at once and hands the same envelope to the transport
 * for the others, ignoring its own envelopes when they come back.
 */
import type { Principal } from '../auth/index.ts';
import type { Logger } from '../log/index.ts';
import type { TenantScope } from '../tenancy/index.ts';
import { Hub, KeyedQueue, scopeKey } from './hub.ts';
import type { PresenceEntry, PresenceStore } from './presence.ts';
import { frames, type Member } from './protocol.ts';
import type { Session } from './session.ts';
import type { Envelope, Transport } from './transport.ts';
import type { ChannelGuard, RealtimeBus } from './types.ts';

interface LocalPresence {
  readonly entry: PresenceEntry;
  /** This instance's connections of the user subscribed to the channel. */
  count: number;
}

export class RealtimeTier implements RealtimeBus {
  readonly hub = new Hub();
  private readonly guards: Array<{ prefix: string; guard: ChannelGuard }> = [];
  private readonly local = new Map<string, LocalPresence>();
  private readonly presenceQueue = new KeyedQueue();
  private stopping = false;

  constructor(
    readonly instanceId: string,
    private readonly transport: Transport,
    private readonly presence: PresenceStore,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    await this.presence.register();
    await this.transport.start((envelope) => {
      if (envelope.origin !== this.instanceId) this.deliver(envelope);
    });
  }

  publish(tenantId: string | null, channel: string, data: unknown, from: string | null = null): Promise<void> {
    const raw = JSON.stringify(data === undefined ? null : data);
    return this.publishMessage({ kind: 'message', origin: this.instanceId, tenant: tenantId, channel, raw, from });
  }

  stats(): { connections: number; channels: number } {
    return { connections: this.hub.sessions.size, channels: this.hub.scopeCount };
  }

  guardChannels(prefix: string, guard: ChannelGuard): void {
    this.guards.push({ prefix, guard });
  }

  /** A guarded channel belongs to the capability that guards it: clients may not publish on it. */
  isGuarded(channel: string): boolean {
    return this.guards.some((g) => channel.startsWith(g.prefix));
  }

  /** Every guard whose prefix matches must allow; a guard that throws denies. */
  async mayAccess(principal: Principal, scope: TenantScope, channel: string): Promise<boolean> {
    for (const { prefix, guard } of this.guards) {
      if (!channel.startsWith(prefix)) continue;
      const allowed = await guard(principal, scope, channel).catch((err: unknown) => {
        this.log.error({ err, channel }, 'realtime: channel guard failed');
        return false;
      });
      if (!allowed) return false;
    }
    return true;
  }

  /** Presence news (join, leave): delivered on this instance now (skipping `except`), then to every other instance. */
  broadcast(envelope: Envelope, except?: Session): Promise<void> {
    this.deliver(envelope, except);
    return this.transport.send(envelope);
  }

  /**
   * A published message: sent to every other instance first, delivered on
   * this one (skipping `except`) once that succeeded, so that a publish
   * answered with an error frame has been delivered nowhere.
   */
  async publishMessage(envelope: Envelope & { kind: 'message' }, except?: Session): Promise<void> {
    await this.transport.send(envelope);
    this.deliver(envelope, except);
  }

  /** A message every instance hears by itself (a Postgres notification): delivered to this instance's subscribers only. */
  deliverHere(tenant: string | null, channel: string, raw: string): void {
    this.deliver({ kind: 'message', origin: this.instanceId, tenant, channel, raw, from: null });
  }

  async join(session: Session, channel: string): Promise<void> {
    const entry = { tenant: session.tenant, channel, userId: session.userId };
    const first = await this.updatePresence(entry, +1);
    session.channels.add(channel);
    this.hub.add(scopeKey(session.tenant, channel), session);
    session.send(frames.subscribed(channel));
    if (first) await this.broadcast({ kind: 'join', origin: this.instanceId, ...entry }, session);
  }

  async leave(session: Session, channel: string): Promise<void> {
    session.channels.delete(channel);
    this.hub.remove(scopeKey(session.tenant, channel), session);
    const entry = { tenant: session.tenant, channel, userId: session.userId };
    if (await this.updatePresence(entry, -1)) await this.announceLeave(entry);
  }

  members(tenant: string | null, channel: string): Promise<Member[]> {
    return this.presence.members(tenant, channel);
  }

  /** Keeps this instance alive in the shared tables and announces leaves of dead instances. */
  async heartbeat(): Promise<void> {
    const reaped = await this.presence.heartbeat(() => [...this.local.values()].map((p) => p.entry));
    for (const entry of reaped) await this.announceLeave(entry);
    await this.transport.sweep();
  }

  /** Before closing the connections at shutdown: their leaves are then done in bulk by stop(). */
  quiesce(): void {
    this.stopping = true;
  }

  /** After every connection is closed: leave the shared presence, announcing who is gone. */
  async stop(): Promise<void> {
    this.stopping = true;
    const gone = await this.presence.unregister().catch((err: unknown) => {
      this.log.error({ err }, 'realtime: leaving presence failed');
      return [];
    });
    for (const entry of gone) await this.announceLeave(entry).catch(() => undefined);
    await this.transport.stop();
  }

  private announceLeave(entry: PresenceEntry): Promise<void> {
    return this.broadcast({ kind: 'leave', origin: this.instanceId, ...entry });
  }

  /**
   * Counts the user's local connections on the channel; the shared table is
   * touched only on the first and the last. Returns whether the user joined
   * (or left) the channel as a whole, across instances.
   */
  private updatePresence(entry: PresenceEntry, delta: 1 | -1): Promise<boolean> {
    const key = JSON.stringify([entry.tenant, entry.channel, entry.userId]);
    return this.presenceQueue.run(key, async () => {
      const current = this.local.get(key);
      const count = (current?.count ?? 0) + delta;
      if (count > 0) {
        const first = !current && (await this.presence.join(entry));
        this.local.set(key, { entry, count });
        return first;
      }
      this.local.delete(key);
      return !this.stopping && (await this.presence.leave(entry));
    });
  }

  private deliver(envelope: Envelope, except?: Session): void {
    const frame = envelope.kind === 'message'
      ? frames.message(envelope.channel, envelope.raw, envelope.from)
      : frames[envelope.kind](envelope.channel, envelope.userId);
    this.hub.deliver(scopeKey(envelope.tenant, envelope.channel), frame, except);
  }
}
