/**
 * The worker loop: lease up to `capacity` jobs, run the handler on each,
 * heartbeat while it runs, and acknowledge successes in batches (one request
 * and one server transaction for every job finished in the same tick).
 */
import { WorkerClient, WorkerHttpError, type GraphQLResult, type LeasedJob } from './client.ts';
import { AckBatcher } from './acks.ts';
import type { WorkerStats } from './stats.ts';

export type { WorkerStats } from './stats.ts';

export interface JobContext<P = unknown> extends LeasedJob<P> {
  /** Aborted when the lease is lost (another worker may now run the job) or a stop deadline passed. */
  readonly signal: AbortSignal;
  /** Reports progress (realtime channel `job:{id}`) and extends the lease. */
  progress(percent: number, message?: string, data?: unknown): Promise<void>;
  /**
   * Write-back for an action's job (queue `actions`): runs a GraphQL operation
   * as the user who caused the job, in the job's tenant, bound to this lease.
   * Its writes may enqueue further actions, up to SVC_ACTION_MAX_DEPTH hops.
   * Throws WorkerHttpError (409 when the lease was lost, which also aborts `signal`).
   */
  graphql<T = any>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResult<T>>;
}

export type JobHandler<P = unknown, R = unknown> = (job: JobContext<P>) => R | Promise<R>;

export interface WorkerOptions<P = unknown, R = unknown> {
  readonly baseUrl: string;
  /** A worker token (`wkr_...`) minted by an admin with `POST /jobs/workers`. */
  readonly token: string;
  readonly queues: readonly string[];
  readonly handler: JobHandler<P, R>;
  /**
   * Jobs run at once (1..1000, default 10). Above 100 (the most one
   * `POST /jobs/lease` hands out) the free slots are leased by several
   * requests at once, of up to 100 jobs each.
   */
  readonly capacity?: number;
  /** Lease length in seconds (default 30); heartbeats go out every third of it. */
  readonly visibilitySecs?: number;
  /** Wait between lease polls when the queues are empty (default 1000 ms). */
  readonly pollIntervalMs?: number;
  /** Stop gracefully on SIGTERM and SIGINT (default true). */
  readonly handleSignals?: boolean;
  /** How long stop() waits for running jobs before letting their leases lapse (default 30 s). */
  readonly stopTimeoutMs?: number;
  /** Called on errors the loop survives (lease or acknowledgement failures, lost leases). */
  readonly onError?: (error: unknown, job?: LeasedJob<P>) => void;
  /** Transient-error retries per request (default 6) and the first retry delay (default 100 ms). */
  readonly maxTries?: number;
  readonly retryBaseMs?: number;
}

/** The most jobs one `POST /jobs/lease` hands out (the specification's clamp of `capacity`). */
const MAX_LEASE = 100;
/** The most jobs a worker runs at once: one acknowledgement request (the server's batch limit) holds them all. */
const MAX_CAPACITY = 1000;

/** Throw this from a handler to fail the job without retries (it goes dead). */
export class NonRetryableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NonRetryableError';
  }
}


/**
 * One leased job while it runs. Its AbortController is made only when the
 * handler asks for `signal`: a short job never pays for one (they were the
 * largest per-job cost of a drain, with a heartbeat timer each).
 */
class Run {
  done: Promise<void> = Promise.resolve();
  lastBeat = Date.now();
  private controller: AbortController | null = null;
  private reason: Error | null = null;

  constructor(readonly job: LeasedJob<any>) {}

  get aborted(): boolean {
    return this.reason !== null;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: Error): void {
    if (this.reason) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/** What a handler gets: the job's fields and its lease-bound calls (methods, no per-job closures). */
interface Context<P> extends LeasedJob<P> {} // the job's fields, set in the constructor
class Context<P> implements JobContext<P> {
  constructor(private readonly run: Run, private readonly worker: Worker<P, any>) {
    const { id, queue, kind, payload, attempts, maxAttempts, leaseId } = run.job as LeasedJob<P>;
    Object.assign(this, { id, queue, kind, payload, attempts, maxAttempts, leaseId });
  }

  get signal(): AbortSignal {
    return this.run.signal;
  }

  progress(percent: number, message?: string, data?: unknown): Promise<void> {
    return this.worker.progressOf(this.run, percent, message, data);
  }

  graphql<T = any>(query: string, variables?: Record<string, unknown>): Promise<GraphQLResult<T>> {
    return this.worker.graphqlOf<T>(this.run, query, variables);
  }
}

export class Worker<P = unknown, R = unknown> {
  readonly stats: WorkerStats = { leased: 0, completed: 0, failed: 0, lost: 0 };
  private readonly client: WorkerClient;
  private readonly acks: AckBatcher;
  private readonly capacity: number;
  private readonly visibilitySecs: number;
  private readonly active = new Map<string, Run>();
  private heartbeats: NodeJS.Timeout | null = null;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private stopped: Promise<void> | null = null;
  private readonly onSignal = () => void this.stop();

  constructor(private readonly options: WorkerOptions<P, R>) {
    this.client = new WorkerClient(options);
    this.capacity = Math.min(MAX_CAPACITY, Math.max(1, Math.floor(options.capacity ?? 10)));
    this.visibilitySecs = Math.max(1, Math.floor(options.visibilitySecs ?? 30));
    this.acks = new AckBatcher(this.client, this.stats, (error) => this.report(error), () => this.nudge());
  }

  /** Starts the loop; resolves once the worker has stopped. */
  start(): Promise<void> {
    if (!this.loop) {
      if (this.options.handleSignals !== false) {
        process.once('SIGTERM', this.onSignal);
        process.once('SIGINT', this.onSignal);
      }
      this.startHeartbeats();
      this.loop = this.run();
    }
    return this.loop.then(() => this.stopped ?? undefined);
  }

  /** Stops leasing, waits for running jobs (up to stopTimeoutMs), flushes acknowledgements. */
  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  /** How many jobs are running now. */
  get inFlight(): number {
    return this.active.size;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const free = this.capacity - this.active.size;
      if (free <= 0 || this.acks.pending >= 2 * this.capacity) {
        await this.sleep(this.options.pollIntervalMs ?? 1000);
        continue;
      }
      const jobs = await this.lease(free);
      for (const job of jobs) this.begin(job);
      if (jobs.length === 0) await this.sleep(this.options.pollIntervalMs ?? 1000);
    }
  }

  /** `free` jobs at most, in requests of up to MAX_LEASE sent together. */
  private async lease(free: number): Promise<LeasedJob<P>[]> {
    const sizes = Array.from({ length: Math.ceil(free / MAX_LEASE) }, (_, i) => Math.min(MAX_LEASE, free - i * MAX_LEASE));
    const leased = await Promise.all(sizes.map(async (size) => {
      try {
        return await this.client.lease<P>(this.options.queues, size, this.visibilitySecs);
      } catch (error) {
        this.report(error);
        return [];
      }
    }));
    const jobs = leased.flat();
    this.stats.leased += jobs.length;
    return jobs;
  }

  private begin(job: LeasedJob<P>): void {
    const run = new Run(job);
    this.active.set(job.id, run);
    run.done = this.execute(run).finally(() => {
      this.active.delete(job.id);
      this.nudge();
    });
  }

  private async execute(run: Run): Promise<void> {
    const job = run.job as LeasedJob<P>;
    try {
      const result = await this.options.handler(new Context<P>(run, this));
      if (!run.aborted) this.acks.add({ id: job.id, leaseId: job.leaseId, result });
    } catch (error) {
      if (!run.aborted) await this.fail(run, error);
    }
  }

  private async fail(run: Run, error: unknown): Promise<void> {
    const job = run.job as LeasedJob<P>;
    const message = error instanceof Error ? error.message : String(error);
    try {
      const outcome = await this.client.fail(job.id, job.leaseId, message, !(error instanceof NonRetryableError));
      if (outcome) this.stats.failed++;
      else this.leaseLost(run);
    } catch (failure) {
      this.report(failure, job); // the lease lapses and the job is retried after the reclaim sweep
    }
  }

  /** @internal JobContext.progress */
  async progressOf(run: Run, percent: number, message?: string, data?: unknown): Promise<void> {
    if (run.aborted) return;
    const current = await this.client.progress(run.job.id, run.job.leaseId, percent, message, data);
    if (current) run.lastBeat = Date.now();
    else this.leaseLost(run);
  }

  /** @internal JobContext.graphql */
  async graphqlOf<T>(run: Run, query: string, variables?: Record<string, unknown>): Promise<GraphQLResult<T>> {
    try {
      return await this.client.graphql<T>({ jobId: run.job.id, leaseId: run.job.leaseId }, query, variables);
    } catch (error) {
      if (error instanceof WorkerHttpError && error.status === 409) this.leaseLost(run);
      throw error;
    }
  }

  /**
   * One timer for the worker: every job still running a third of the lease
   * after its last heartbeat (or its start) gets one, so a lease never lapses
   * while its job runs.
   */
  private startHeartbeats(): void {
    const periodMs = (this.visibilitySecs * 1000) / 3;
    this.heartbeats = setInterval(() => {
      const due = Date.now() - periodMs;
      for (const run of this.active.values()) {
        if (run.lastBeat <= due && !run.aborted) void this.beat(run);
      }
    }, Math.max(50, periodMs / 4));
    this.heartbeats.unref();
  }

  private async beat(run: Run): Promise<void> {
    run.lastBeat = Date.now();
    try {
      const current = await this.client.heartbeat(run.job.id, run.job.leaseId, this.visibilitySecs);
      if (!current) this.leaseLost(run);
    } catch (error) {
      this.report(error, run.job as LeasedJob<P>);
    }
  }

  private leaseLost(run: Run): void {
    if (run.aborted) return;
    this.stats.lost++;
    const error = new Error(`lease lost for job ${run.job.id}`);
    run.abort(error);
    this.report(error, run.job as LeasedJob<P>);
  }

  private async shutdown(): Promise<void> {
    this.stopping = true;
    this.nudge();
    process.off('SIGTERM', this.onSignal);
    process.off('SIGINT', this.onSignal);
    await this.loop;
    const running = Promise.all([...this.active.values()].map((job) => job.done));
    const deadline = this.delay(this.options.stopTimeoutMs ?? 30_000);
    if ((await Promise.race([running.then(() => 'done'), deadline.promise])) !== 'done') {
      // Past the deadline: abort what still runs; its leases lapse and the reclaim sweep requeues them.
      for (const run of this.active.values()) run.abort(new Error('worker stopped'));
    }
    deadline.cancel();
    if (this.heartbeats) clearInterval(this.heartbeats);
    await this.acks.flushAll();
    this.client.close();
  }

  private sleep(ms: number): Promise<void> {
    const { promise, cancel } = this.delay(ms);
    this.wake = cancel;
    return promise.then(() => {
      this.wake = null;
    });
  }

  /** Ends an idle wait early: a slot was freed, acknowledgements drained, or stop was asked. */
  private nudge(): void {
    this.wake?.();
  }

  private delay(ms: number): { promise: Promise<unknown>; cancel: () => void } {
    let cancel = () => {};
    const promise = new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      cancel = () => {
        clearTimeout(timer);
        resolve(undefined);
      };
    });
    return { promise, cancel };
  }

  private report(error: unknown, job?: LeasedJob<P>): void {
    this.options.onError?.(error, job);
  }
}

export function createWorker<P = unknown, R = unknown>(options: WorkerOptions<P, R>): Worker<P, R> {
  return new Worker(options);
}

/** Handlers per action, each seeing its own payload type (from the generated `actions.ts`). */
export type ActionHandlers<P extends { action: string }> = {
  readonly [K in P['action']]?: (job: JobContext<Extract<P, { action: K }>>) => unknown;
};

/**
 * One handler for queue `actions` that dispatches on the action's name:
 *
 *   import type { ActionPayload } from './generated/actions.ts';
 *   createWorker<ActionPayload>({ baseUrl, token, queues: ['actions'], handler: actionHandler<ActionPayload>({
 *     scoreLead: async (job) => job.graphql(UPDATE, { id: job.payload.input.id, data: { score: 5 } }),
 *   }) });
 *
 * A job of an action without a handler fails without retries (NonRetryableError).
 */
export function actionHandler<P extends { action: string }>(handlers: ActionHandlers<P>): JobHandler<P> {
  return (job) => {
    const handle = (handlers as Record<string, ((job: JobContext<P>) => unknown) | undefined>)[job.kind];
    if (!handle) throw new NonRetryableError(`no handler for action ${job.kind}`);
    return handle(job);
  };
}
