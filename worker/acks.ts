/**
 * Batched acknowledgements: successes finished in the same tick go out as one
 * `POST /jobs/complete`, so a drained batch costs one request and one server
 * transaction, not one per job. One flush is in flight at a time; what
 * finishes meanwhile waits for the next.
 */
import type { WorkerClient } from './client.ts';
import type { WorkerStats } from './stats.ts';

interface Ack {
  readonly id: string;
  readonly leaseId: string;
  readonly result: unknown;
}

const MAX_BATCH = 1000; // the server's limit per request

export class AckBatcher {
  private queue: Ack[] = [];
  private inFlight = 0;
  private flushing: Promise<void> | null = null;
  private scheduled = false;

  constructor(
    private readonly client: WorkerClient,
    private readonly stats: WorkerStats,
    private readonly report: (error: unknown) => void,
    private readonly drained: () => void,
  ) {}

  /** Acknowledgements queued or on the wire. */
  get pending(): number {
    return this.queue.length + this.inFlight;
  }

  add(ack: Ack): void {
    this.queue.push(ack);
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    // After the current microtasks: every handler that finished in this tick joins the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Sends everything queued (used at stop). */
  async flushAll(): Promise<void> {
    while (this.queue.length > 0 || this.flushing) {
      await (this.flushing ?? this.flush());
    }
  }

  private flush(): Promise<void> {
    if (this.flushing || this.queue.length === 0) return this.flushing ?? Promise.resolve();
    const batch = this.queue.splice(0, MAX_BATCH);
    this.inFlight = batch.length;
    this.flushing = this.send(batch).finally(() => {
      this.inFlight = 0;
      this.flushing = null;
      this.drained();
      if (this.queue.length > 0) void this.flush();
    });
    return this.flushing;
  }

  private async send(batch: Ack[]): Promise<void> {
    try {
      const { completed, stale } = await this.client.completeMany(batch);
      this.stats.completed += completed.length;
      this.stats.lost += stale.length;
    } catch (error) {
      // Unacknowledged leases lapse; the reclaim sweep requeues those jobs (at-least-once).
      this.report(error);
    }
  }
}
