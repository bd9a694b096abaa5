/**
 * The change feed (ADR 010): every committed change of the event log, read
 * in (tx, seq) order below the oldest running transaction, by one reader per
 * instance. Provides `ctx.services.feed`:
 *
 * - `subscribe({ from?, accepts?, maxQueued? })`: an in-process subscriber
 *   (GraphQL `modelChanges`): live, or replay from a position then live;
 * - `consume(consumer)`: a durable consumer with a named cursor, advanced in
 *   the transaction of its effect (exactly once per change);
 * - `poke()`: called after a local commit (`events.committed()` does it).
 *
 * No write transaction notifies: the feed reads the log the writes already fill.
 */
import { fileURLToPath } from 'node:url';
import { newId } from '../ids.ts';
import { preparesStatements, type Db } from '../db/index.ts';
import { defineCapability, type ServiceContext } from '../core/index.ts';
import { ensureCursor, runConsumer, type ConsumerHandle, type ConsumerStart, type DurableConsumer } from './durable.ts';
import { compare, filterOf, positionOf, readPage, type FeedPosition } from './read.ts';
import { FeedPositionError, FeedReader, type FeedStats } from './reader.ts';
import { consumerPositions, globalBacklog, heldPositions, tenantBacklog, type Backlog } from './lag.ts';
import { decodePosition, headOf, readTenantPage, tenantPositionOf, type TenantPosition } from './tenant.ts';
import { tenantKey, tenantOfKey, type FeedCursorMode } from '../events/index.ts';
import type { FeedSubscription, SubscribeOptions, Subscriber } from './subscription.ts';

export { FeedOverflowError, type FeedSubscription, type SubscribeOptions } from './subscription.ts';
export { compare as comparePositions, ORIGIN, type FeedChange, type FeedPosition, type Interest } from './read.ts';
export type { DurableConsumer, ConsumerHandle, ConsumerStats, ConsumerStart } from './durable.ts';
export type { FeedStats } from './reader.ts';
export { FeedPositionError } from './reader.ts';
export { encodePosition, decodePosition, type TenantPosition } from './tenant.ts';
export { LAG_BOUND, type Backlog } from './lag.ts';

export interface ChangeFeed {
  /** Where this instance's reader stands: every change at or before it was delivered. */
  readonly head: FeedPosition;
  subscribe(options?: SubscribeOptions): FeedSubscription;
  /** Starts a durable consumer (its cursor is created at `start` if absent, default 'now'). */
  consume(consumer: DurableConsumer, options?: { start?: ConsumerStart }): Promise<ConsumerHandle>;
  /** `global`: positions are (tx, seq); `tenant`: (tenant, tenant_seq) (ADR 025 decision 4). */
  readonly mode: FeedCursorMode;
  /**
   * The feed position of an event in this feed's mode, and its tenant; null for an unknown id.
   * Also takes an encoded position (`encodePosition`). A position of the other mode (an event never
   * stamped in tenant mode, an encoded position of the other mode) throws FeedPositionError.
   */
  positionOf(eventId: string): Promise<{ position: FeedPosition | TenantPosition; tenantId: string | null } | null>;
  poke(): void;
  stats(): FeedStats;
  /** What this instance's reader has not read yet, in this feed's mode (lag.ts: bounded, never a scan of the log). */
  backlog(): Promise<Backlog>;
  /** What the durable consumer `name` has not handled yet: after its cursor (global), beyond its per-tenant cursors (tenant). */
  consumerBacklog(name: string, position: FeedPosition): Promise<Backlog>;
}

declare module '../core/capability.ts' {
  interface Services {
    feed: ChangeFeed;
  }
}

/** Pages read by a subscriber that replays from a past position. */
const CATCH_UP_PAGE = 500;

export const feed = defineCapability({
  name: 'feed',
  provides: ['feed'],
  requires: ['events'],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const pool = readerPool(ctx);
    const prepared = preparesStatements(ctx);
    const reader = new FeedReader({
      db: pool?.db ?? ctx.db, notifier: ctx.dbKind === 'server' ? ctx.notifier : null, instanceId: newId(), log: ctx.log, prepared,
      mode: ctx.services.events.cursor,
    });
    await reader.start();
    const unpoke = ctx.services.events.onCommitted(() => reader.poke());
    const consumers = new Set<ConsumerHandle>();
    ctx.services.feed = createFeedService(ctx, reader, consumers, prepared);
    return {
      async stop() {
        unpoke();
        for (const consumer of consumers) await consumer.stop();
        await reader.stop();
        await pool?.end();
      },
    };
  },
});

/**
 * On a server, the reader reads through a pool of its own, one connection,
 * opened per read as needed: its reads never queue behind requests when the
 * main pool is saturated (that queue is the feed's lag under load). Embedded,
 * it shares the one connection: its reads are single statements.
 */
function readerPool(ctx: ServiceContext<never>): { db: Db; end(): Promise<void> } | null {
  if (ctx.dbKind !== 'server' || ctx.config.databaseUrl === null) return null;
  const db = ctx.pgp({ connectionString: ctx.config.databaseUrl, max: 1, idleTimeoutMillis: 10_000, application_name: 'svc-gen-feed' });
  db.$pool.on('error', () => undefined); // a killed idle connection is replaced on the next read
  return { db, end: () => db.$pool.end() };
}

function createFeedService(ctx: ServiceContext<never>, reader: FeedReader, consumers: Set<ConsumerHandle>, prepared: boolean): ChangeFeed {
  const mode = reader.mode;
  const catchUp = (s: Subscriber) => void (mode === 'tenant' ? replayTenant(ctx, reader, s) : replay(ctx, reader, s, prepared))
    .catch((err: Error) => s.fail(err));
  return {
    mode,
    get head() {
      return reader.head;
    },
    subscribe: (options = {}) => reader.subscribe(options, catchUp),
    async consume(consumer, options = {}) {
      await ensureCursor(ctx.db, consumer.name, options.start ?? 'now', mode);
      const handle = runConsumer(ctx.db, consumer, ctx.log, prepared, mode);
      const unlisten = reader.onBatch(() => handle.wake(), { streams: consumer.streams, eventTypes: consumer.eventTypes });
      const owned: ConsumerHandle = {
        drain: () => handle.drain(),
        stats: () => handle.stats(),
        async stop() {
          unlisten();
          consumers.delete(owned);
          await handle.stop();
        },
      };
      consumers.add(owned);
      handle.wake(); // catch up with what was committed while no instance ran it
      return owned;
    },
    async positionOf(eventId) {
      const encoded = decodePosition(eventId);
      if (encoded) {
        if (('tenant' in encoded) !== (mode === 'tenant')) throw new FeedPositionError(mode);
        return { position: encoded, tenantId: 'tenant' in encoded ? tenantOfKey(encoded.tenant) : null };
      }
      if (mode === 'global') return positionOf(ctx.db, eventId);
      const found = await tenantPositionOf(ctx.db, eventId);
      if (!found) return null;
      if (found.tenantSeq === null) throw new FeedPositionError(mode);
      return { position: { tenant: tenantKey(found.tenantId), seq: found.tenantSeq }, tenantId: found.tenantId };
    },
    poke: () => reader.poke(),
    stats: () => reader.stats(),
    backlog: () => (mode === 'tenant' ? tenantBacklog(ctx.db, heldPositions(reader.tenantPositions())) : globalBacklog(ctx.db, reader.head)),
    consumerBacklog: (name, position) => (mode === 'tenant' ? tenantBacklog(ctx.db, consumerPositions(name)) : globalBacklog(ctx.db, position)),
  };
}

/** Reads from the subscriber's cursor until it reaches the reader's head, then hands it to the live batches. */
async function replay(ctx: ServiceContext<never>, reader: FeedReader, s: Subscriber, prepared: boolean): Promise<void> {
  for (;;) {
    await s.room();
    if (s.closed) return;
    const page = await readPage(ctx.db, s.cursor, CATCH_UP_PAGE, false, filterOf([s.interest]), prepared);
    s.offer(page.changes, page.end);
    if (s.closed) return;
    // No await between this test and the switch: the reader cannot deliver in between.
    if (page.changes.length < CATCH_UP_PAGE && compare(reader.head, s.cursor) <= 0) {
      s.live = true;
      return;
    }
  }
}

/**
 * Tenant mode: replays the subscriber's tenant from its position until it
 * reaches the reader's place there, then lets that tenant's live batches in
 * (the other tenants were live from the start).
 */
async function replayTenant(ctx: ServiceContext<never>, reader: FeedReader, s: Subscriber): Promise<void> {
  const tenant = s.catchingUp;
  if (tenant === null) return;
  const filter = filterOf([s.interest]);
  for (;;) {
    await s.room();
    if (s.closed) return;
    const after = s.tenantCursor?.get(tenant) ?? 0;
    const top = await headOf(ctx.db, tenant);
    const page = await readTenantPage(ctx.db, tenant, after, Math.max(top, after), CATCH_UP_PAGE, false, filter);
    s.offer(page.changes, reader.head);
    s.advanceTenant(tenant, page.end);
    if (s.closed) return;
    // No await between this test and the switch: the reader cannot deliver in between.
    if (!page.full && reader.tenantHeadOf(tenant) <= (s.tenantCursor?.get(tenant) ?? 0)) {
      s.catchingUp = null;
      return;
    }
  }
}
