import { describe, expect, it } from 'vitest';
import { decodeTime } from 'ulid';
import { newId, newMonotonicId } from '../../runtime/ids.ts';

describe('newId', () => {
  it('is a ULID: 26 Crockford base32 characters carrying the time', () => {
    const now = Date.UTC(2026, 10, 21, 12, 0, 0, 123);
    const id = newId(now);
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(decodeTime(id)).toBe(now);
  });

  it('sorts by creation time and does not repeat', () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => newId(1_700_000_000_000 + Math.floor(i / 10)));
    expect(new Set(ids).size).toBe(ids.length);
    const times = ids.map(decodeTime);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });
});

describe('newMonotonicId', () => {
  it('sorts in generation order within one millisecond and when the clock steps back', () => {
    const base = 1_800_000_000_000;
    const clock = [base, base, base, base + 5, base + 5, base + 2, base + 6];
    const ids = Array.from({ length: 3_000 }, (_, i) => newMonotonicId(clock[i % clock.length]! + Math.floor(i / clock.length) * 10));
    expect(ids.every((id) => /^[0-9A-HJKMNP-TV-Z]{26}$/.test(id))).toBe(true);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('carries the time it was made at', () => {
    const now = 1_900_000_000_000;
    expect(decodeTime(newMonotonicId(now))).toBe(now);
  });
});
