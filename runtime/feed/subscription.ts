/**
 * One in-process subscriber of the feed: a bounded queue read as an async
 * iterator. A subscriber that starts from a past position first catches up
 * from the database on its own, then joins the reader's live batches; its
 * cursor drops anything it already has, so there is no gap and no duplicate
 * at the seam. A subscriber whose queue overflows is closed with
 * FeedOverflowError after what it already queued: never silently skipped.
 */
import { compare, later, type FeedChange, type FeedPosition, type Interest } from './read.ts';
import type { TenantPosition } from './tenant.ts';
import { tenantKey } from '../events/index.ts';

export class FeedOverflowError extends Error {
  constructor(
    readonly queued: number,
    /** The last change the subscriber receives before this error: resume after it. */
    readonly resumeAfter: FeedChange | null,
  ) {
    super(`the subscriber fell ${queued} changes behind and was closed; subscribe again after its last change`);
    this.name = 'FeedOverflowError';
  }
}

export interface FeedSubscription extends AsyncIterableIterator<FeedChange> {
  /** Ends the subscription; a pending `next()` resolves done. */
  close(): void;
}

export interface SubscribeOptions extends Interest {
  /**
   * Start after this position (replay, then live); live from the reader's head when absent. In
   * tenant mode a `(tenant, seq)` position: that tenant is replayed, the others are live at once.
   * A position of the other mode throws FeedPositionError.
   */
  readonly from?: FeedPosition | TenantPosition;
  /**
   * Which changes this subscriber wants (tenant, model, access), among the
   * `streams` (and `eventTypes`) it declared: declare them whenever you can,
   * the reader then reads nothing for it beyond them.
   */
  readonly accepts?: (change: FeedChange) => boolean;
  /** Queue bound; above it the subscription fails with FeedOverflowError. Default 1000. */
  readonly maxQueued?: number;
}

export class Subscriber implements FeedSubscription {
  /** 'catchup' until the subscriber reached the reader's head; then it takes live batches. */
  live = false;
  /** Tenant mode: where the subscriber stands in each tenant it received from (others: nothing yet). */
  tenantCursor: Map<string, number> | null = null;
  /** Tenant mode: the tenant it replays; live batches of that tenant wait for the replay (index.ts). */
  catchingUp: string | null = null;
  private readonly queue: FeedChange[] = [];
  private waiting: { resolve: (r: IteratorResult<FeedChange>) => void; reject: (e: unknown) => void } | null = null;
  private failure: Error | null = null;
  private done = false;
  private lastDelivered: FeedChange | null = null;
  private roomWaiter: (() => void) | null = null;

  constructor(
    /** Every change at or before it has been queued or filtered out. */
    public cursor: FeedPosition,
    private readonly accepts: (change: FeedChange) => boolean,
    private readonly maxQueued: number,
    private readonly detach: (s: Subscriber) => void,
    /** The streams (and event types) it reads: the reader's filter includes them. */
    readonly interest: Interest = {},
  ) {}

  get closed(): boolean {
    return this.done || this.failure !== null;
  }

  /** Offers changes in order, then moves the cursor to `end`; drops what is at or before the cursor. */
  offer(changes: readonly FeedChange[], end: FeedPosition, fromLive = false): void {
    if (this.tenantCursor) {
      this.offerTenant(this.tenantCursor, changes, fromLive);
      return;
    }
    for (const change of changes) {
      if (this.closed) return;
      if (compare(change.position, this.cursor) <= 0) continue;
      this.cursor = change.position;
      if (this.accepts(change)) this.push(change);
    }
    if (!this.closed) this.cursor = later(this.cursor, end);
  }

  /** Tenant mode: per tenant, drops what is at or before the subscriber's place there. */
  private offerTenant(cursor: Map<string, number>, changes: readonly FeedChange[], fromLive: boolean): void {
    for (const change of changes) {
      if (this.closed) return;
      const tenant = tenantKey(change.tenantId);
      if (fromLive && tenant === this.catchingUp) continue;
      const at = cursor.get(tenant);
      if (at !== undefined && change.tenantSeq! <= at) continue;
      cursor.set(tenant, change.tenantSeq!);
      if (this.accepts(change)) this.push(change);
    }
  }

  /** Tenant mode: the replay read everything of `tenant` up to `seq`. */
  advanceTenant(tenant: string, seq: number): void {
    if (!this.tenantCursor || this.closed) return;
    this.tenantCursor.set(tenant, Math.max(this.tenantCursor.get(tenant) ?? 0, seq));
  }

  fail(error: Error): void {
    if (this.closed) return;
    this.failure = error;
    this.detach(this);
    this.roomWaiter?.();
    this.roomWaiter = null;
    if (this.waiting && this.queue.length === 0) {
      const { reject } = this.waiting;
      this.waiting = null;
      reject(error);
    }
  }

  private push(change: FeedChange): void {
    if (this.waiting) {
      const { resolve } = this.waiting;
      this.waiting = null;
      this.lastDelivered = change;
      resolve({ value: change, done: false });
      return;
    }
    if (this.queue.length >= this.maxQueued) {
      this.fail(new FeedOverflowError(this.queue.length, this.queue.at(-1) ?? this.lastDelivered));
      return;
    }
    this.queue.push(change);
  }

  /** Resolves once the queue is at most half full (or closed): a catch-up reads no faster than its reader. */
  room(): Promise<void> {
    if (this.closed || this.queue.length <= this.maxQueued / 2) return Promise.resolve();
    return new Promise((resolve) => (this.roomWaiter = resolve));
  }

  next(): Promise<IteratorResult<FeedChange>> {
    const change = this.queue.shift();
    if (this.roomWaiter && this.queue.length <= this.maxQueued / 2) {
      this.roomWaiter();
      this.roomWaiter = null;
    }
    if (change) {
      this.lastDelivered = change;
      return Promise.resolve({ value: change, done: false });
    }
    if (this.failure) return Promise.reject(this.failure);
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  close(): void {
    if (this.done) return;
    this.done = true;
    this.queue.length = 0;
    this.roomWaiter?.();
    this.roomWaiter = null;
    this.detach(this);
    this.waiting?.resolve({ value: undefined, done: true });
    this.waiting = null;
  }

  async return(): Promise<IteratorResult<FeedChange>> {
    this.close();
    return { value: undefined, done: true };
  }

  async throw(error?: unknown): Promise<IteratorResult<FeedChange>> {
    this.close();
    throw error;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
