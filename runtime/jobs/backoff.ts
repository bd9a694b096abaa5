/**
 * Retry backoff after a retryable failure of attempt number `attempts`:
 *
 *   delaySecs = max(1, floor(min(3600, 2^attempts) * jitter)),  jitter uniform in [0.5, 1)
 *
 * Exponential so a failing dependency is not hammered, capped at an hour, and
 * jittered so jobs that failed together do not retry together. The SQL in
 * ack.ts computes the same expression from the row's attempts.
 */
export const MAX_BACKOFF_SECS = 3600;

export function retryJitter(): number {
  return 0.5 + Math.random() * 0.5;
}

export function retryDelaySecs(attempts: number, jitter: number): number {
  return Math.max(1, Math.floor(Math.min(MAX_BACKOFF_SECS, 2 ** attempts) * jitter));
}
