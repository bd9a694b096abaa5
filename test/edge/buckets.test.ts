/** The token bucket behind the rate limit: refill arithmetic and the bounded map. */
import { describe, expect, it } from 'vitest';
import { TokenBuckets } from '../../runtime/edge/index.ts';

describe('TokenBuckets', () => {
  it('allows `capacity` requests at once, then refills capacity/window per second', () => {
    const buckets = new TokenBuckets({ capacity: 100, windowSecs: 60 });
    for (let i = 0; i < 100; i++) expect(buckets.take('a', 0).allowed).toBe(true);
    expect(buckets.take('a', 0)).toEqual({ allowed: false, retryAfterSecs: 1 }); // 100/60 tokens a second
    expect(buckets.take('a', 599).allowed).toBe(false);
    expect(buckets.take('a', 600).allowed).toBe(true); // one token after 0.6 s
    expect(buckets.take('b', 0).allowed).toBe(true); // per key
  });

  it('says how long until the next token (Retry-After)', () => {
    const buckets = new TokenBuckets({ capacity: 5, windowSecs: 60 });
    for (let i = 0; i < 5; i++) buckets.take('a', 0);
    expect(buckets.take('a', 0)).toEqual({ allowed: false, retryAfterSecs: 12 });
    expect(buckets.take('a', 6_000)).toEqual({ allowed: false, retryAfterSecs: 6 });
  });

  it('keeps the map bounded, dropping idle (refilled) buckets first, then the least recently used', () => {
    const buckets = new TokenBuckets({ capacity: 2, windowSecs: 1, maxEntries: 100 });
    for (let i = 0; i < 1000; i++) buckets.take(`ip${i}`, i);
    expect(buckets.size).toBeLessThanOrEqual(100);
    // A busy client keeps its (empty) bucket when idle ones are dropped.
    const busy = new TokenBuckets({ capacity: 2, windowSecs: 60, maxEntries: 10 });
    for (let i = 0; i < 9; i++) busy.take(`idle${i}`, 0);
    busy.take('hot', 60_000);
    busy.take('hot', 60_000);
    for (let i = 0; i < 5; i++) busy.take(`new${i}`, 61_000); // past 10 entries: the idle ones have refilled
    expect(busy.size).toBe(6);
    expect(busy.take('hot', 61_000).allowed).toBe(false);
  });
});
