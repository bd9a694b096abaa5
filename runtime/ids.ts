/**
 * ULIDs, generated cheaply: the `ulid` package draws one random byte per
 * character from the OS (16 calls an id), which profiled as the largest CPU
 * cost of the write path. Here the 80 random bits come from a pooled buffer
 * refilled 4 KiB at a time. Same format: 10 characters of millisecond time,
 * 16 of randomness, Crockford base32, sortable by creation time.
 */
import { randomFillSync } from 'node:crypto';

const ENCODING = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

function randomChars(): string {
  if (offset + 16 > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  let out = '';
  for (let i = 0; i < 16; i++) out += ENCODING[pool[offset + i] & 31];
  offset += 16;
  return out;
}

function timeChars(now: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ENCODING[now % 32] + out;
    now = Math.floor(now / 32);
  }
  return out;
}

/** A new ULID (26 characters). */
export function newId(now: number = Date.now()): string {
  return timeChars(now) + randomChars();
}

let lastTime = -1;
let lastRandom = '';

function increment(random: string): string {
  const chars = random.split('');
  for (let i = chars.length - 1; i >= 0; i--) {
    const at = ENCODING.indexOf(chars[i]!);
    if (at < 31) {
      chars[i] = ENCODING[at + 1]!;
      return chars.join('');
    }
    chars[i] = ENCODING[0]!;
  }
  throw new Error('ULID randomness exhausted within one millisecond');
}

/**
 * A ULID that sorts after every earlier one of this process, even within one
 * millisecond or when the clock steps back (the `ulid` package's
 * monotonicFactory, from the pooled randomness): jobs keep their enqueue order.
 */
export function newMonotonicId(now: number = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom);
    return timeChars(lastTime) + lastRandom;
  }
  lastTime = now;
  lastRandom = randomChars();
  return timeChars(now) + lastRandom;
}
