/**
 * Token buckets keyed by client: `capacity` tokens, refilled continuously at
 * capacity / windowSecs per second. The map is bounded: past `maxEntries` it
 * first drops buckets that have refilled completely (idle clients, whose
 * state equals a fresh bucket's, so dropping them changes nothing), then the
 * least recently used ones.
 */

export type Take = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSecs: number };

interface Bucket {
  tokens: number;
  at: number;
}

export interface TokenBucketsOptions {
  readonly capacity: number;
  readonly windowSecs: number;
  readonly maxEntries?: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMs: number;
  private readonly maxEntries: number;

  constructor(private readonly options: TokenBucketsOptions) {
    this.perMs = options.capacity / (options.windowSecs * 1000);
    this.maxEntries = options.maxEntries ?? 50_000;
  }

  get size(): number {
    return this.buckets.size;
  }

  take(key: string, now = Date.now()): Take {
    const bucket = this.buckets.get(key) ?? { tokens: this.options.capacity, at: now };
    bucket.tokens = Math.min(this.options.capacity, bucket.tokens + (now - bucket.at) * this.perMs);
    bucket.at = now;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.delete(key); // re-insert: Map order is then least recently used first
    this.buckets.set(key, bucket);
    // After the take: this bucket is no longer full, so the eviction never drops it.
    if (this.buckets.size > this.maxEntries) this.evict(now);
    if (allowed) return { allowed: true };
    return { allowed: false, retryAfterSecs: Math.max(1, Math.ceil((1 - bucket.tokens) / this.perMs / 1000)) };
  }

  private evict(now: number): void {
    const target = Math.floor(this.maxEntries * 0.9);
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.at) * this.perMs >= this.options.capacity) this.buckets.delete(key);
    }
    for (const key of this.buckets.keys()) {
      if (this.buckets.size <= target) break;
      this.buckets.delete(key);
    }
  }
}
