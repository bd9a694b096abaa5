/**
 * Gives a pool's surplus connections back to Postgres one at a time.
 *
 * pg-pool closes a connection once it has been idle for `idleTimeoutMillis`
 * (10 s by default), each on its own timer. After a burst (a thousand
 * WebSocket clients connecting, a batch of writes) every connection the burst
 * opened goes idle at the same moment, so they all close at the same moment:
 * 19 backends ending together took ~200 ms of both cores on the 2-core
 * machine of issue 16, and every process on it (the server fanning out
 * realtime messages included) stalled for that long (docs/performance.md,
 * "The pool's idle close").
 *
 * So the pools are created without pg-pool's idle timers, and this closes, at
 * most once per `everyMs`, one connection that none of the last `idleMs` of
 * traffic needed: the fewest idle connections seen over that window, taken
 * once a tick, is the surplus. A closed connection lowers the window's counts
 * by one, so a surplus of 19 is given back over 19 ticks, spaced.
 */

/** What this needs of a pg-pool (pg's Pool and pg-promise's `$pool` both are one). */
export interface ShrinkablePool {
  readonly idleCount: number;
  readonly waitingCount: number;
  connect(): Promise<{ release(destroy?: boolean | Error): void }>;
}

export interface ShrinkOptions {
  /** How long a connection must have been surplus before it is closed; 0 never closes one. */
  readonly idleMs: number;
  /** At most one connection closed per tick. */
  readonly everyMs?: number;
}

const DEFAULT_EVERY_MS = 1_000;

/** Starts shrinking `pool`; returns the stop function. */
export function shrinkGradually(pool: ShrinkablePool, options: ShrinkOptions): () => void {
  if (options.idleMs <= 0) return () => undefined;
  const everyMs = options.everyMs ?? DEFAULT_EVERY_MS;
  const window: number[] = [];
  const size = Math.max(1, Math.ceil(options.idleMs / everyMs));
  let closing = false;

  const tick = () => {
    window.push(pool.idleCount);
    if (window.length > size) window.shift();
    if (closing || window.length < size || pool.waitingCount > 0 || pool.idleCount === 0) return;
    if (Math.min(...window) === 0) return;
    closing = true;
    for (let i = 0; i < window.length; i++) window[i] -= 1;
    // An idle connection is handed out at once; released with `true`, the pool ends it instead of keeping it.
    pool.connect()
      .then((client) => client.release(true))
      .catch(() => undefined) // the pool is ending, or the connection broke: nothing to give back
      .finally(() => (closing = false));
  };

  const timer = setInterval(tick, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
