/**
 * Sessions and refresh tokens.
 *
 * A refresh token is 32 random bytes (base64url) stored only as its SHA-256.
 * Each refresh marks the presented token used and issues a successor in the
 * same transaction. The `used_at is null` condition of that update is the
 * whole concurrency story: of two refreshes racing with one token, Postgres
 * lets exactly one update the row; the other then sees it used, which is
 * indistinguishable from a replay by a thief, so the session is revoked
 * (OAuth 2.0 Security BCP, refresh token rotation). Clients must serialise
 * their refreshes.
 */
import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../ids.ts';
import type { Tx } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import type { Role } from '../ir/types.ts';

/** Where every instance hears that sessions changed (payload `s:<sessionId>` or `u:<userId>`). */
export const SESSIONS_CHANNEL = 'svc_auth_sessions';

export interface IssuedSession {
  readonly sessionId: string;
  readonly refreshToken: string;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

async function insertRefreshToken(t: Tx, sessionId: string, ttlSecs: number): Promise<string> {
  const token = newRefreshToken();
  await t.none(compile(sql`
    insert into svc_refresh_tokens (token_hash, session_id, expires_at)
     values (${sql.value(hashToken(token))}, ${sql.value(sessionId)}, now() + ${sql.value(ttlSecs)} * interval '1 second')`));
  return token;
}

export async function createSession(
  t: Tx, user: { id: string; role: Role; tenant_id: string | null }, ttlSecs: number,
): Promise<IssuedSession> {
  const sessionId = newId();
  await t.none(compile(sql`
    insert into svc_sessions (id, user_id, role, tenant_id, expires_at)
     values (${sql.value(sessionId)}, ${sql.value(user.id)}, ${sql.value(user.role)}, ${sql.value(user.tenant_id)},
       now() + ${sql.value(ttlSecs)} * interval '1 second')`));
  return { sessionId, refreshToken: await insertRefreshToken(t, sessionId, ttlSecs) };
}

export type Rotation =
  | {
    readonly kind: 'rotated'; readonly sessionId: string; readonly userId: string; readonly refreshToken: string;
    readonly role: Role; readonly tenantId: string | null;
  }
  | { readonly kind: 'invalid' }
  | { readonly kind: 'reused'; readonly sessionId: string; readonly userId: string; readonly tenantId: string | null };

/**
 * Consumes a refresh token. `invalid`: unknown, expired, or its session is
 * revoked or expired. `reused`: it was already used; the caller revokes.
 */
export async function rotateRefreshToken(t: Tx, token: string, ttlSecs: number): Promise<Rotation> {
  const hash = hashToken(token);
  const used = await t.oneOrNone<{ session_id: string; user_id: string; role: Role; tenant_id: string | null }>(compile(sql`
    update svc_refresh_tokens r set used_at = now()
       from svc_sessions s
      where r.token_hash = ${sql.value(hash)} and r.used_at is null and r.expires_at > now()
        and s.id = r.session_id and s.revoked_at is null and s.expires_at > now()
      returning r.session_id, s.user_id, s.role, s.tenant_id`));
  if (used) {
    const refreshToken = await insertRefreshToken(t, used.session_id, ttlSecs);
    return {
      kind: 'rotated', sessionId: used.session_id, userId: used.user_id, refreshToken, role: used.role, tenantId: used.tenant_id,
    };
  }
  const known = await t.oneOrNone<{ session_id: string; used: boolean; user_id: string; tenant_id: string | null }>(compile(sql`
    select r.session_id, r.used_at is not null as used, s.user_id, s.tenant_id
       from svc_refresh_tokens r join svc_sessions s on s.id = r.session_id where r.token_hash = ${sql.value(hash)}`));
  return known?.used
    ? { kind: 'reused', sessionId: known.session_id, userId: known.user_id, tenantId: known.tenant_id }
    : { kind: 'invalid' };
}

/** Revokes a session and tells every instance on commit. */
export async function revokeSession(t: Tx, sessionId: string, reason: string): Promise<void> {
  await t.none(compile(sql`
    update svc_sessions set revoked_at = now(), revoked_reason = ${sql.value(reason)}
     where id = ${sql.value(sessionId)} and revoked_at is null`));
  await announceSessionChange(t, `s:${sessionId}`);
}

export async function revokeUserSessions(t: Tx, userId: string, reason: string): Promise<void> {
  await t.none(compile(sql`
    update svc_sessions set revoked_at = now(), revoked_reason = ${sql.value(reason)}
     where user_id = ${sql.value(userId)} and revoked_at is null`));
  await announceSessionChange(t, `u:${userId}`);
}

/** Copies a user's new role and tenant onto the sessions its access tokens name. */
export async function syncUserSessions(t: Tx, user: { id: string; role: Role; tenant_id: string | null }) {
  await t.none(compile(sql`
    update svc_sessions set role = ${sql.value(user.role)}, tenant_id = ${sql.value(user.tenant_id)}
     where user_id = ${sql.value(user.id)} and revoked_at is null`));
  await announceSessionChange(t, `u:${user.id}`);
}

/**
 * pg_notify in the transaction: delivered to every instance when it commits,
 * never before. A rare control message (logout, revocation, an admin's user
 * edit), never on a record or job write path (ADR 010).
 */
export async function announceSessionChange(t: Tx, payload: string): Promise<void> {
  await t.result(compile(sql`select pg_notify(${sql.value(SESSIONS_CHANNEL, 'text')}, ${sql.value(payload, 'text')})`));
}
