/**
 * The in-process runners of one instance: they lease advances from the
 * internal queue with the job engine's SKIP LOCKED lease (so instances never
 * take the same advance) and run up to `concurrency` at once.
 *
 * Woken by: a local commit that made an advance due (`due`), any run
 * transition in the change feed (another instance's commit, the awaits
 * consumer), a timer for a delay or backoff made here, and, for what nothing
 * announces (a delay set by another instance, an expired lease returned by
 * the reclaim sweep), an idle look every `pollMs`.
 *
 * An http request frees its runner while it is in flight: it runs as a task
 * of its own (`requests`), at most SVC_WORKFLOW_HTTP_PER_ORIGIN per origin
 * (`slots`), so an endpoint that never answers holds no runner.
 */
import type { ChangeFeed, FeedSubscription } from '../feed/index.ts';
import type { LeasedJob } from '../jobs/index.ts';
import { advance } from './engine.ts';
import { OriginSlots } from './http.ts';
import { ADVANCE_QUEUE, RUN_STREAM, type EngineDeps } from './types.ts';

export interface RunnerOptions {
  readonly workerId: string;
  readonly concurrency: number;
  readonly leaseSecs: number;
  readonly pollMs: number;
  /** Requests in flight to one origin at once. */
  readonly httpPerOrigin: number;
}

/** Pause after the lease itself failed (database unreachable), before trying again. */
const LEASE_FAILURE_PAUSE_MS = 1000;

export class Runners {
  private readonly running = new Set<Promise<void>>();
  private readonly requests = new Set<Promise<void>>();
  private readonly slots: OriginSlots;
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private pending = false;
  private subscription: FeedSubscription | null = null;

  constructor(private readonly deps: EngineDeps, private readonly options: RunnerOptions) {
    this.slots = new OriginSlots(options.httpPerOrigin);
  }

  start(feed: ChangeFeed | undefined): void {
    this.loop = this.run();
    if (feed) void this.follow(feed);
  }

  /** Look for due advances now. */
  wake(): void {
    this.pending = true;
    this.wakeUp?.();
  }

  /** An advance becomes due in `delaySecs`. */
  due(delaySecs: number): void {
    if (this.stopped) return;
    if (delaySecs <= 0) return this.wake();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.wake();
    }, delaySecs * 1000 + 5);
    timer.unref();
    this.timers.add(timer);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.subscription?.close();
    for (const timer of this.timers) clearTimeout(timer);
    this.wake();
    await this.loop;
    await Promise.allSettled([...this.running]);
    await Promise.allSettled([...this.requests]);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      this.pending = false;
      const free = this.options.concurrency - this.running.size;
      if (free > 0) {
        const leased = await this.lease(free);
        if (leased === null) {
          await this.sleep(LEASE_FAILURE_PAUSE_MS);
          continue;
        }
        for (const job of leased) this.track(job);
        if (leased.length === free) continue; // there may be more
      }
      if (!this.pending) await this.sleep(this.options.pollMs);
    }
  }

  private async lease(capacity: number): Promise<LeasedJob[] | null> {
    try {
      return await this.deps.jobs.internal.lease(ADVANCE_QUEUE, capacity, this.options.leaseSecs, this.options.workerId);
    } catch (err) {
      if (!this.stopped) this.deps.log.warn({ err }, 'workflow runner could not lease');
      return null;
    }
  }

  private track(job: LeasedJob): void {
    const work = advance(this.deps, job, this.slots)
      .then((inFlight) => {
        if (inFlight) this.detach(job, inFlight.done);
      })
      .catch((err) => this.fault(job, err))
      .finally(() => {
        this.running.delete(work);
        this.wake(); // a slot is free
      });
    this.running.add(work);
  }

  /** The advance's request goes on without its runner; it still holds the advance's lease. */
  private detach(job: LeasedJob, done: Promise<void>): void {
    const request = done
      .catch((err) => this.fault(job, err))
      .finally(() => this.requests.delete(request));
    this.requests.add(request);
  }

  /** An engine fault (not a step failure): the advance goes back to the queue after a backoff. */
  private async fault(job: LeasedJob, err: unknown): Promise<void> {
    this.deps.log.error({ err, jobId: job.id, payload: job.payload }, 'workflow advance failed: retried after a backoff');
    await this.deps.jobs.internal.fail(job.id, job.leaseId, err instanceof Error ? err.message : String(err))
      .catch((failure) => this.deps.log.warn({ err: failure, jobId: job.id }, 'workflow advance could not be released: its lease lapses'));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = () => {
        this.wakeUp = null;
        done();
      };
    });
  }

  /** Wakes on every committed run transition, from any instance; resubscribes after an overflow. */
  private async follow(feed: ChangeFeed): Promise<void> {
    while (!this.stopped) {
      this.subscription = feed.subscribe({ streams: [RUN_STREAM], accepts: (change) => change.modelName === RUN_STREAM, maxQueued: 100 });
      try {
        for await (const _ of this.subscription) this.wake();
      } catch {
        this.wake(); // fell behind: whatever it missed is looked for now
      }
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, 100).unref());
    }
  }
}
