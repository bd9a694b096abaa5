/**
 * Retry backoff: the delay is the SQL function svc_job_backoff_secs
 * (migrations/0003_backoff.sql), which every statement scheduling a retry
 * calls; the application only draws the jitter. `retryDelaySecs` asks the
 * database for a caller whose own statements do not compute the delay.
 */
import type { Db, Tx } from '../db/index.ts';
import { sql } from '../sql/index.ts';
import { prepare } from '../sql/prepare.ts';

/** The jitter factor, uniform in [0.5, 1): jobs that failed together do not retry together. */
export function retryJitter(): number {
  return 0.5 + Math.random() * 0.5;
}

const BACKOFF = prepare<{ attempts: number; jitter: number }>((arg) => sql`
  select svc_job_backoff_secs(${arg('attempts', 'int')}, ${arg('jitter', 'double precision')}) as secs`);

/** The backoff before attempt number `attempts` is retried, in seconds (svc_job_backoff_secs). */
export async function retryDelaySecs(runner: Db | Tx, attempts: number): Promise<number> {
  const row = await runner.one<{ secs: number }>(BACKOFF.text, BACKOFF.values({ attempts, jitter: retryJitter() }));
  return row.secs;
}
