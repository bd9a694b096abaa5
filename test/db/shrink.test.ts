/**
 * The pool's surplus is given back one connection per tick, and only what
 * the whole window did not need (runtime/db/shrink.ts). A pool stand-in with
 * fake timers: each tick is one sample.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { shrinkGradually, type ShrinkablePool } from '../../runtime/db/shrink.ts';

/** `idle` connections idle, `busy` checked out; `closed` counts the connections ended. */
class FakePool implements ShrinkablePool {
  idle = 0;
  busy = 0;
  waitingCount = 0;
  closed = 0;
  get idleCount() {
    return this.idle;
  }
  async connect() {
    if (this.idle === 0) throw new Error('the shrinker must only take an idle connection');
    this.idle -= 1;
    this.busy += 1;
    return {
      release: (destroy?: boolean | Error) => {
        this.busy -= 1;
        if (destroy) this.closed += 1;
        else this.idle += 1;
      },
    };
  }
}

const EVERY = 100;
/** Runs `n` ticks and lets the shrinker's checkout and release settle after each. */
async function ticks(n: number) {
  for (let i = 0; i < n; i++) await vi.advanceTimersByTimeAsync(EVERY);
}

beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe('shrinkGradually', () => {
  it('closes nothing before the window has passed, then one connection per tick', async () => {
    const pool = Object.assign(new FakePool(), { idle: 5 });
    const stop = shrinkGradually(pool, { idleMs: 500, everyMs: EVERY });
    await ticks(4);
    expect(pool.closed).toBe(0);
    for (let expected = 1; expected <= 5; expected++) {
      await ticks(1);
      expect(pool.closed).toBe(expected);
    }
    await ticks(10);
    expect(pool.closed).toBe(5);
    stop();
  });

  it('keeps what any sample of the window needed', async () => {
    const pool = Object.assign(new FakePool(), { idle: 6 });
    const stop = shrinkGradually(pool, { idleMs: 500, everyMs: EVERY });
    await ticks(3);
    // A burst that needs 4 of the 6 for one tick: only 2 are surplus over the window.
    pool.idle = 2;
    pool.busy = 4;
    await ticks(1);
    pool.idle = 6;
    pool.busy = 0;
    await ticks(3);
    expect(pool.closed).toBe(2);
    // Four more ticks without the burst in the window: the rest is surplus too.
    await ticks(10);
    expect(pool.closed).toBe(6);
    stop();
  });

  it('closes nothing while requests wait for a connection', async () => {
    const pool = Object.assign(new FakePool(), { idle: 3, waitingCount: 1 });
    const stop = shrinkGradually(pool, { idleMs: 200, everyMs: EVERY });
    await ticks(10);
    expect(pool.closed).toBe(0);
    stop();
  });

  it('closes nothing with idleMs 0, or once stopped', async () => {
    const kept = Object.assign(new FakePool(), { idle: 3 });
    shrinkGradually(kept, { idleMs: 0, everyMs: EVERY });
    const stopped = Object.assign(new FakePool(), { idle: 3 });
    shrinkGradually(stopped, { idleMs: 200, everyMs: EVERY })();
    await ticks(10);
    expect([kept.closed, stopped.closed]).toEqual([0, 0]);
  });
});
