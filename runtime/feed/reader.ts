/**
 * The feed reader: one per instance. It tails the event log through the pool
 * (no connection held between reads, so it runs on the one connection of the
 * embedded database) and hands each page to the live subscribers and to the
 * batch listeners (durable consumers' wake-ups).
 *
 * When it reads: right after a local commit (`poke()`, at most one read per
 * MIN_GAP_MS however many commits), when another instance hints that it
 * committed (one NOTIFY on `svc_feed`, sent outside every write transaction,
 * at most one per HINT_GAP_MS per instance, and only while another instance
 * is known to listen: each says `hello` once a second), and otherwise every 50 ms while
 * changes flow, backing off to 500 ms when idle. Hints are only a shortcut:
 * the poll alone delivers everything, including after a lost connection.
 *
 * What it reads: the union of what its subscribers and batch listeners
 * declared (`streams`, `eventTypes`), everything when one of them declared
 * nothing. A subscriber that joins while a narrower read is in flight makes
 * the reader read that page again, wider, before delivering it: no gap.
 */
import type { Db, Notifier } from '../db/index.ts';
import type { Logger } from '../log/index.ts';
import { covers, currentPosition, filterOf, readPage, wants, type FeedChange, type FeedFilter, type FeedPosition, type Interest } from './read.ts';
import { Subscriber, type SubscribeOptions } from './subscription.ts';
import { allHeads, headsBeyond, readTenantPages, type TenantPosition } from './tenant.ts';
import type { FeedCursorMode } from '../events/index.ts';

export const HINT_CHANNEL = 'svc_feed';
const PAGE = 1000;
const MIN_GAP_MS = 5;
const HINT_GAP_MS = 5;
/** Each instance says hello this often; hints go out only while a hello from another came within PEER_TTL_MS. */
const HELLO_MS = 1000;
const PEER_TTL_MS = 3500;
const HELLO = 'hello:';
const ACTIVE_POLL_MS = 50;
const IDLE_POLL_MS = 500;
const MAX_RETRY_MS = 2000;
/** Tenant mode: first pages of this many tenants per round trip. */
const TENANTS_PER_TRIP = 100;

export type BatchListener = (changes: readonly FeedChange[], end: FeedPosition) => void;

export interface FeedStats {
  readonly mode: FeedCursorMode;
  /** Global mode: every change at or before it was delivered. Tenant mode: null (positions are per tenant, see `tenants`). */
  readonly head: FeedPosition | null;
  /** Tenant mode: tenants the reader holds a position in; null in global mode. */
  readonly tenants: number | null;
  readonly delivered: number;
  readonly reads: number;
  readonly failures: number;
  readonly subscribers: number;
  /** Commit-to-read delay of the oldest change of the last page, in ms; 0 once a read finds nothing new (caught up). */
  readonly lastLagMs: number;
  readonly maxLagMs: number;
  /** Time spent in reads since start, in ms (with `reads`: the mean read time). */
  readonly readMs: number;
  /** Wake-up hints sent to other instances (none while no other instance said hello). */
  readonly hints: number;
}

export interface ReaderOptions {
  readonly db: Db;
  /** Null on the embedded database: one process, no other instance to hint. */
  readonly notifier: Notifier | null;
  readonly instanceId: string;
  readonly log: Logger;
  /** Read with a prepared statement (a server without a transaction pooler). */
  readonly prepared?: boolean;
  /** `tenant`: read per tenant by `tenant_seq` (ADR 025 decision 4); default `global`, by (tx, seq). */
  readonly mode?: FeedCursorMode;
}

export class FeedReader {
  private head_: FeedPosition = { tx: '0', seq: 0 };
  /** Tenant mode: where the reader stands in each tenant (absent: 0, a tenant that had no change when it started). */
  private readonly tenantHead = new Map<string, number>();
  private readonly subscribers = new Set<Subscriber>();
  private readonly listeners = new Map<BatchListener, Interest>();
  private filter_: FeedFilter | null | undefined;
  private timer: NodeJS.Timeout | null = null;
  private timerDue = 0;
  private running: Promise<void> | null = null;
  private again = false;
  private lastReadAt = 0;
  private idleMs = ACTIVE_POLL_MS;
  private retryMs = 0;
  private stopped = false;
  private unlisten: (() => Promise<void>) | null = null;
  private hinting = false;
  private hintAgain = false;
  private hello: NodeJS.Timeout | null = null;
  /** When another instance last said hello or hinted (0: none known). */
  private peerSeenAt = 0;
  private stats_ = { delivered: 0, reads: 0, failures: 0, lastLagMs: 0, maxLagMs: 0, readMs: 0, hints: 0 };

  constructor(private readonly options: ReaderOptions) {}

  get head(): FeedPosition {
    return this.head_;
  }

  get mode(): FeedCursorMode {
    return this.options.mode ?? 'global';
  }

  /** Tenant mode: every change of `tenant` at or before this position was delivered. */
  tenantHeadOf(tenant: string): number {
    return this.tenantHead.get(tenant) ?? 0;
  }

  async start(): Promise<void> {
    const { notifier, instanceId } = this.options;
    let started = false;
    // The LISTEN connection opens while the head is read (two connections opened at once, not one after the other).
    // Settled at once (a failure is kept, not left unhandled while the head is read).
    const listening = notifier?.listen(HINT_CHANNEL, (payload) => {
      const hello = payload.startsWith(HELLO);
      const origin = hello ? payload.slice(HELLO.length) : payload;
      if (origin === instanceId) return;
      this.peerSeenAt = Date.now();
      if (!hello && started) this.wake();
    }).then((unlisten) => ({ unlisten }), (error: unknown) => ({ error }));
    try {
      if (this.mode === 'tenant') for (const [tenant, seq] of await allHeads(this.options.db)) this.tenantHead.set(tenant, seq);
      else this.head_ = await currentPosition(this.options.db);
    } catch (error) {
      const listened = await listening;
      if (listened && 'unlisten' in listened) await listened.unlisten();
      throw error;
    }
    started = true;
    const listened = await listening;
    if (listened && 'error' in listened) throw listened.error;
    if (notifier && listened) {
      this.unlisten = listened.unlisten;
      // Alone, an instance sends no hints (a NOTIFY is a transaction of its own); a peer's hello turns them on.
      const sayHello = () => void notifier.notify(HINT_CHANNEL, HELLO + instanceId).catch(() => undefined);
      sayHello();
      this.hello = setInterval(sayHello, HELLO_MS);
      this.hello.unref();
    }
    this.arm(this.idleMs);
  }

  /** A local transaction that appended has committed: read soon, and hint the other instances. */
  poke(): void {
    this.wake();
    this.hint();
  }

  subscribe(options: SubscribeOptions, catchUp: (s: Subscriber) => void): Subscriber {
    const interest: Interest = { streams: options.streams, eventTypes: options.eventTypes };
    const from = options.from;
    const tenantFrom = from && 'tenant' in from ? from : null;
    if (from && (tenantFrom !== null) !== (this.mode === 'tenant')) {
      throw new FeedPositionError(this.mode);
    }
    const subscriber = new Subscriber(tenantFrom || !from ? this.head_ : from as FeedPosition, options.accepts ?? (() => true),
      options.maxQueued ?? 1000, (s) => {
        this.subscribers.delete(s);
        this.filter_ = undefined;
      }, interest);
    if (this.mode === 'tenant') {
      // Live at once for every tenant; the one its position names catches up first (index.ts).
      subscriber.tenantCursor = new Map(tenantFrom ? [[tenantFrom.tenant, tenantFrom.seq]] : []);
      subscriber.catchingUp = tenantFrom?.tenant ?? null;
    }
    this.subscribers.add(subscriber);
    this.filter_ = undefined;
    if (this.mode === 'tenant') {
      subscriber.live = true;
      if (tenantFrom) catchUp(subscriber);
    } else if (from) catchUp(subscriber);
    else subscriber.live = true;
    return subscriber;
  }

  /** Calls `listener` after each page with changes `interest` wants (every page when it names no streams). */
  onBatch(listener: BatchListener, interest: Interest = {}): () => void {
    this.listeners.set(listener, interest);
    this.filter_ = undefined;
    return () => {
      this.listeners.delete(listener);
      this.filter_ = undefined;
    };
  }

  /** What a read must hold now: the union of every subscriber's and listener's interest. */
  filter(): FeedFilter | null {
    if (this.filter_ === undefined) {
      this.filter_ = filterOf([...[...this.subscribers].map((s) => s.interest), ...this.listeners.values()]);
    }
    return this.filter_;
  }

  /** Tenant mode: where the reader stands in each tenant it has seen (a tenant absent: 0). */
  tenantPositions(): ReadonlyMap<string, number> {
    return new Map(this.tenantHead);
  }

  stats(): FeedStats {
    const tenant = this.mode === 'tenant';
    return {
      mode: this.mode, head: tenant ? null : this.head_, tenants: tenant ? this.tenantHead.size : null,
      subscribers: this.subscribers.size, ...this.stats_,
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.hello) clearInterval(this.hello);
    await this.unlisten?.();
    await this.running;
    for (const s of [...this.subscribers]) s.close();
  }

  private wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.arm(Math.max(0, this.lastReadAt + MIN_GAP_MS - Date.now()));
  }

  private arm(ms: number): void {
    const due = Date.now() + ms;
    if (this.timer && this.timerDue <= due) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.run().finally(() => (this.running = null)).then(() => this.rearm());
    }, ms);
    this.timer.unref();
  }

  private rearm(): void {
    if (this.stopped) return;
    if (this.again) {
      this.again = false;
      this.arm(MIN_GAP_MS);
    } else {
      this.arm(this.retryMs || this.idleMs);
    }
  }

  private async run(): Promise<void> {
    this.again = false;
    try {
      let found = 0;
      if (this.mode === 'tenant') found = await this.readTenants();
      else for (;;) {
        const started = performance.now();
        const used = this.filter();
        const page = await readPage(this.options.db, this.head_, PAGE, false, used, this.options.prepared);
        this.stats_.reads += 1;
        this.stats_.readMs += performance.now() - started;
        // Someone joined meanwhile and wants more than this read holds: read the same range again, wider.
        if (!covers(used, this.filter())) continue;
        this.deliver(page.changes, page.end, page.lagMs);
        found += page.changes.length;
        if (page.changes.length < PAGE || this.stopped) break;
      }
      this.retryMs = 0;
      this.idleMs = found > 0 ? ACTIVE_POLL_MS : Math.min(IDLE_POLL_MS, this.idleMs * 2);
    } catch (err) {
      // A lost connection or a restarting server: the pool reconnects, the read resumes at the head.
      this.stats_.failures += 1;
      this.retryMs = Math.min(MAX_RETRY_MS, Math.max(ACTIVE_POLL_MS, this.retryMs * 2));
      this.options.log.warn({ err, retryMs: this.retryMs }, 'change feed: read failed');
    } finally {
      this.lastReadAt = Date.now();
    }
  }

  /**
   * Tenant mode: every tenant whose head moved beyond the reader's position
   * there, page by page; the first pages of up to TENANTS_PER_TRIP tenants in
   * one round trip (embedded: one statement at a time).
   */
  private async readTenants(): Promise<number> {
    let heads = [...(await headsBeyond(this.options.db, this.tenantHead))];
    let found = 0;
    const perTrip = this.options.notifier ? TENANTS_PER_TRIP : 1;
    while (heads.length > 0 && !this.stopped) {
      const batch = heads.slice(0, perTrip);
      const started = performance.now();
      const used = this.filter();
      const pages = await readTenantPages(this.options.db,
        batch.map(([tenant, upTo]) => ({ tenant, after: this.tenantHeadOf(tenant), upTo })), PAGE, false, used);
      this.stats_.reads += 1;
      this.stats_.readMs += performance.now() - started;
      if (!covers(used, this.filter())) continue; // someone joined wider meanwhile: the same pages again
      heads = heads.slice(batch.length);
      const more: Array<[string, number]> = [];
      for (const [i, page] of pages.entries()) {
        const [tenant, upTo] = batch[i];
        this.tenantHead.set(tenant, page.end);
        if (page.changes.length > 0) this.deliver(page.changes, this.head_, page.lagMs);
        found += page.changes.length;
        if (page.full) more.push([tenant, upTo]);
      }
      heads.push(...more);
    }
    if (found === 0) this.deliver([], this.head_, 0);
    return found;
  }

  private deliver(changes: readonly FeedChange[], end: FeedPosition, lagMs: number): void {
    this.head_ = end;
    if (changes.length === 0) {
      // Nothing new up to the horizon: the feed is not behind, whatever the last burst's lag was.
      this.stats_.lastLagMs = 0;
      return;
    }
    this.stats_.delivered += changes.length;
    this.stats_.lastLagMs = lagMs;
    this.stats_.maxLagMs = Math.max(this.stats_.maxLagMs, lagMs);
    for (const s of this.subscribers) if (s.live) s.offer(changes, end, true);
    for (const [listener, interest] of this.listeners) {
      if (interest.streams && !changes.some((change) => wants(interest, change))) continue;
      try {
        listener(changes, end);
      } catch (err) {
        this.options.log.error({ err }, 'change feed: a batch listener failed');
      }
    }
  }

  /** One NOTIFY at a time, at most one per HINT_GAP_MS, only with a peer listening; never inside a write transaction. */
  private hint(): void {
    const { notifier, instanceId } = this.options;
    if (!notifier || this.stopped || Date.now() - this.peerSeenAt > PEER_TTL_MS) return;
    if (this.hinting) {
      this.hintAgain = true;
      return;
    }
    this.hinting = true;
    this.stats_.hints += 1;
    notifier.notify(HINT_CHANNEL, instanceId)
      .catch(() => undefined) // a hint is a shortcut: the poll delivers without it
      .then(() => new Promise((resolve) => setTimeout(resolve, HINT_GAP_MS)))
      .finally(() => {
        this.hinting = false;
        if (this.hintAgain) {
          this.hintAgain = false;
          this.hint();
        }
      });
  }
}

/** A position of the other feed mode (ADR 025 decision 4): it cannot be translated. */
export class FeedPositionError extends Error {
  constructor(readonly mode: FeedCursorMode) {
    super(mode === 'tenant'
      ? 'position from before the per-tenant feed: subscribe without `after` and reload'
      : 'a per-tenant feed position, but this deployment reads the global feed (SVC_FEED_CURSOR=global): subscribe without `after` and reload');
    this.name = 'FeedPositionError';
  }
}

export type { TenantPosition };
