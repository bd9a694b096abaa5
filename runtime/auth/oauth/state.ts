/**
 * OAuth authorization requests in flight, in the database because the
 * provider may send the browser back to another instance. A state is
 * single-use (taken with `delete ... returning`), expires after STATE_TTL_SECS,
 * and is bound to the browser that started the flow by a random value in an
 * HttpOnly, SameSite=Lax cookie, stored here only as a hash.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../../db/index.ts';
import { compile, sql } from '../../sql/index.ts';

export const STATE_TTL_SECS = 600;
export const BINDING_COOKIE = 'svc_oauth_binding';

export interface PendingAuthorization {
  readonly provider: string;
  readonly browserBinding: string;
  readonly codeVerifier: string;
  readonly nonce: string;
  readonly redirectUri: string;
}

export const randomToken = (bytes = 32) => randomBytes(bytes).toString('base64url');
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** PKCE S256: base64url(sha256(verifier)). */
export function codeChallenge(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

export async function saveState(db: Db, pending: PendingAuthorization): Promise<string> {
  const state = randomToken();
  await db.none(compile(sql`
    insert into svc_oauth_states (state_hash, provider, browser_hash, code_verifier, nonce, redirect_uri, expires_at)
     values (${sql.value(sha256(state))}, ${sql.value(pending.provider)}, ${sql.value(sha256(pending.browserBinding))},
       ${sql.value(pending.codeVerifier)}, ${sql.value(pending.nonce)}, ${sql.value(pending.redirectUri)},
       now() + ${sql.value(STATE_TTL_SECS)} * interval '1 second')`));
  // Expired states of abandoned flows go with the next one; no sweeper needed.
  await db.none('delete from svc_oauth_states where expires_at < now()');
  return state;
}

export type Taken =
  | { readonly ok: true; readonly codeVerifier: string; readonly nonce: string; readonly redirectUri: string }
  | { readonly ok: false; readonly reason: 'unknown' | 'expired' | 'provider' | 'browser' };

/** Consumes a state: whatever the outcome, it cannot be used again. */
export async function takeState(db: Db, state: string, provider: string, browserBinding: string | null): Promise<Taken> {
  const row = await db.oneOrNone<{ provider: string; browser_hash: string; code_verifier: string; nonce: string;
    redirect_uri: string; expired: boolean }>(compile(sql`
    delete from svc_oauth_states where state_hash = ${sql.value(sha256(state))}
     returning provider, browser_hash, code_verifier, nonce, redirect_uri, expires_at < now() as expired`));
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.expired) return { ok: false, reason: 'expired' };
  if (row.provider !== provider) return { ok: false, reason: 'provider' };
  if (!browserBinding || sha256(browserBinding) !== row.browser_hash) return { ok: false, reason: 'browser' };
  return { ok: true, codeVerifier: row.code_verifier, nonce: row.nonce, redirectUri: row.redirect_uri };
}
