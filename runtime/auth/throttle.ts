/**
 * Login throttle, in the database so it holds across instances.
 *
 * Two counts per attempt, both taken before the password is checked (so
 * parallel guesses cannot slip past a limit):
 * - per (account, client address): from the FREE_ATTEMPTS-th attempt on, that
 *   address is locked out of that account for 2^(n - FREE_ATTEMPTS) seconds,
 *   at most MAX_LOCK_SECS. A stranger's guesses lock the stranger, not the owner.
 * - per account (client ''): the ceiling against guesses spread over many
 *   addresses, from ACCOUNT_FREE_ATTEMPTS on, with the same back-off.
 * Attempts while locked answer 429 without checking the password (even a
 * correct one). A success clears the account's counts. A count idle for
 * RESET_AFTER_SECS starts over. Unknown emails are throttled the same way, so
 * the answer reveals nothing about which accounts exist.
 */
import type { Db } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';

export const FREE_ATTEMPTS = 5;
export const ACCOUNT_FREE_ATTEMPTS = 50;
export const MAX_LOCK_SECS = 15 * 60;
// Longer than MAX_LOCK_SECS: waiting out the longest lock must not also wipe the count.
export const RESET_AFTER_SECS = 60 * 60;
/** The client key of the account-wide count. */
const ANY_CLIENT = '';

export type Claim = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterSecs: number };

/** Counts one attempt on (email, client) atomically; null when that key is locked. */
async function count(db: Db, email: string, client: string, free: number): Promise<boolean> {
  const resetAfter = sql`now() - ${sql.value(RESET_AFTER_SECS)} * interval '1 second'`;
  const row = await db.oneOrNone<{ attempts: number }>(compile(sql`
    insert into svc_login_throttle as l (email, client, attempts, last_attempt_at, locked_until)
     values (${sql.value(email)}, ${sql.value(client)}, 1, now(), null)
     on conflict (email, client) do update set
       attempts = case when l.last_attempt_at < ${resetAfter} then 1 else l.attempts + 1 end,
       last_attempt_at = now(),
       locked_until = case
         when l.last_attempt_at < ${resetAfter} then null
         when l.attempts + 1 >= ${sql.value(free)}
           then now() + least(power(2, l.attempts + 1 - ${sql.value(free)}), ${sql.value(MAX_LOCK_SECS)}) * interval '1 second'
         else null end
     where l.locked_until is null or l.locked_until <= now()
     returning attempts`));
  return row !== null;
}

/** Counts one attempt for the client and for the account; refuses it while either is locked. */
export async function claimLoginAttempt(db: Db, email: string, client: string): Promise<Claim> {
  const byClient = await count(db, email, client, FREE_ATTEMPTS);
  const byAccount = byClient && (await count(db, email, ANY_CLIENT, ACCOUNT_FREE_ATTEMPTS));
  if (byClient && byAccount) return { allowed: true };
  const lock = await db.oneOrNone<{ secs: number }>(compile(sql`
    select ceil(extract(epoch from max(locked_until) - now()))::int as secs from svc_login_throttle
      where email = ${sql.value(email)} and client in (${sql.value(client)}, ${sql.value(ANY_CLIENT)}) and locked_until > now()`));
  return { allowed: false, retryAfterSecs: Math.max(1, lock?.secs ?? 1) };
}

export function clearLoginAttempts(db: Db, email: string): Promise<null> {
  return db.none(compile(sql`delete from svc_login_throttle where email = ${sql.value(email)}`));
}

/** Rows deleted per transaction by the sweep. */
export const PRUNE_BATCH = 5_000;

/** How often the sweep runs (once per period across instances). */
export const PRUNE_EVERY_MS = 15 * 60_000;

/**
 * Forgets idle counts of accounts nobody tries any more (unknown emails
 * included), PRUNE_BATCH rows per transaction, read from
 * `svc_login_throttle_last_attempt` (last_attempt_at): a batch walks the rows it
 * deletes. Returns how many rows were deleted; `stopped` ends it between batches.
 */
export async function pruneLoginAttempts(db: Db, stopped: () => boolean = () => false): Promise<number> {
  let total = 0;
  for (;;) {
    const { n } = await db.one<{ n: number }>(compile(sql`
      with doomed as (
         select email, client from svc_login_throttle
          where last_attempt_at < now() - ${sql.value(RESET_AFTER_SECS)} * interval '1 second'
            and (locked_until is null or locked_until < now())
          limit ${sql.value(PRUNE_BATCH, 'int')}),
       gone as (delete from svc_login_throttle l using doomed d where l.email = d.email and l.client = d.client returning 1)
       select count(*)::int as n from gone`));
    total += n;
    if (n < PRUNE_BATCH || stopped()) return total;
  }
}
