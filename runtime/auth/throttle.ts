/**
 * Per-account login throttle, in the database so it holds across instances.
 *
 * Policy: every attempt for an email is counted before the password is
 * checked (so parallel guesses cannot slip past the limit); a success clears
 * the count. From the FREE_ATTEMPTS-th attempt on, the account is locked for
 * 2^(n - FREE_ATTEMPTS) seconds, at most MAX_LOCK_SECS; attempts while it is
 * locked answer 429 without checking the password (even a correct one). A
 * count idle for RESET_AFTER_SECS starts over. Unknown emails are throttled
 * the same way, so the answer reveals nothing about which accounts exist.
 */
import type { Db } from '../db/index.ts';

export const FREE_ATTEMPTS = 5;
export const MAX_LOCK_SECS = 15 * 60;
// Longer than MAX_LOCK_SECS: waiting out the longest lock must not also wipe the count.
export const RESET_AFTER_SECS = 60 * 60;

export type Claim = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSecs: number };

/** Counts one attempt atomically; refuses it while the account is locked. */
export async function claimLoginAttempt(db: Db, email: string): Promise<Claim> {
  const row = await db.oneOrNone<{ attempts: number }>(
    `insert into svc_login_throttle as l (email, attempts, last_attempt_at, locked_until)
     values ($1, 1, now(), null)
     on conflict (email) do update set
       attempts = case when l.last_attempt_at < now() - $2 * interval '1 second' then 1 else l.attempts + 1 end,
       last_attempt_at = now(),
       locked_until = case
         when l.last_attempt_at < now() - $2 * interval '1 second' then null
         when l.attempts + 1 >= $3 then now() + least(power(2, l.attempts + 1 - $3), $4) * interval '1 second'
         else null end
     where l.locked_until is null or l.locked_until <= now()
     returning attempts`,
    [email, RESET_AFTER_SECS, FREE_ATTEMPTS, MAX_LOCK_SECS],
  );
  if (row) return { allowed: true };
  const lock = await db.oneOrNone<{ secs: number }>(
    'select ceil(extract(epoch from locked_until - now()))::int as secs from svc_login_throttle where email = $1',
    [email],
  );
  return { allowed: false, retryAfterSecs: Math.max(1, lock?.secs ?? 1) };
}

export function clearLoginAttempts(db: Db, email: string): Promise<null> {
  return db.none('delete from svc_login_throttle where email = $1', [email]);
}

/** Forgets idle counts of accounts nobody tries any more (unknown emails included). */
export function pruneLoginAttempts(db: Db): Promise<null> {
  return db.none(
    `delete from svc_login_throttle where last_attempt_at < now() - $1 * interval '1 second'
        and (locked_until is null or locked_until < now())`,
    [RESET_AFTER_SECS],
  );
}
