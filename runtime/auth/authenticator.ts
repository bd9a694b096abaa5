/**
 * The session-checking Authenticator: a valid signature is not enough, the
 * token's session must be live and its user enabled.
 *
 * To keep that cheap, session states are cached in memory for a few seconds.
 * Staleness is bounded by two mechanisms: the TTL, and invalidations sent with
 * pg_notify on the commit of every logout, revocation and user change, which
 * every instance hears on SESSIONS_CHANNEL and applies at once. A lookup that
 * started before an invalidation does not store its (possibly stale) answer.
 */
import { LRUCache } from 'lru-cache';
import type { Db, Notifier } from '../db/index.ts';
import { ROLES } from '../ir/types.ts';
import { compile, sql } from '../sql/index.ts';
import type { Authenticator } from './guard.ts';
import { InvalidTokenError, type Principal, type TokenSigner } from './tokens.ts';
import { SESSIONS_CHANNEL } from './sessions.ts';

/**
 * The session check behind every authenticated request on a cache miss:
 * compiled once at load; its one value (the session id) is bound per call.
 */
const SESSION_STATE = compile(sql`
  select s.user_id, s.role, s.tenant_id, u.email
    from svc_sessions s join svc_users u on u.id = s.user_id
   where s.id = ${sql.value(null)} and s.revoked_at is null and s.expires_at > now() and not u.disabled`);
if (SESSION_STATE.values.length !== 1) throw new Error('authenticator: the session check binds one value');

const DEFAULT_TTL_MS = 5_000;
const DEFAULT_MAX_ENTRIES = 10_000;

interface Entry {
  /** null: the session is revoked, expired, unknown, or its user disabled. */
  readonly live: { userId: string; role: Principal['role']; tenantId: string | null; email: string } | null;
}

export interface SessionAuthenticator extends Authenticator {
  /** Drops cached states: `s:<sessionId>` or `u:<userId>` (what the notifications carry). */
  invalidate(key: string): void;
  stop(): Promise<void>;
}

export interface SessionAuthenticatorOptions {
  readonly ttlMs?: number;
  readonly maxEntries?: number;
}

export async function createSessionAuthenticator(
  db: Db, notifier: Notifier, tokens: TokenSigner, options: SessionAuthenticatorOptions = {},
): Promise<SessionAuthenticator> {
  const cache = new LRUCache<string, Entry>({ max: options.maxEntries ?? DEFAULT_MAX_ENTRIES, ttl: options.ttlMs ?? DEFAULT_TTL_MS });
  let generation = 0;

  const invalidate = (key: string) => {
    generation++;
    if (key.startsWith('s:')) cache.delete(key.slice(2));
    else if (key.startsWith('u:')) {
      const userId = key.slice(2);
      const gone = [...cache.entries()].filter(([, entry]) => entry.live?.userId === userId);
      for (const [sid] of gone) cache.delete(sid);
    } else cache.clear();
  };

  const load = async (sessionId: string): Promise<Entry['live']> => {
    const started = generation;
    const row = await db.oneOrNone<{ user_id: string; role: string; tenant_id: string | null; email: string }>(
      { text: SESSION_STATE.text, values: [sessionId] },
    );
    const role = ROLES.find((known) => known === row?.role);
    const live = row && role ? { userId: row.user_id, role, tenantId: row.tenant_id, email: row.email } : null;
    if (generation === started) remember(sessionId, live);
    return live;
  };

  const remember = (sessionId: string, live: Entry['live']) => void cache.set(sessionId, { live });

  const sessionState = async (sessionId: string) => {
    const entry = cache.get(sessionId);
    return entry ? entry.live : load(sessionId);
  };

  // A notification lost while the LISTEN connection reconnects is covered by the TTL.
  const unlisten = await notifier.listen(SESSIONS_CHANNEL, invalidate);

  return {
    async authenticate(token: string): Promise<Principal> {
      const claims = await tokens.verify(token);
      if (!claims.sessionId) throw new InvalidTokenError('token has no session');
      const live = await sessionState(claims.sessionId);
      if (!live || live.userId !== claims.userId) throw new InvalidTokenError('session is not live');
      return { userId: live.userId, role: live.role, tenantId: live.tenantId, sessionId: claims.sessionId, email: live.email };
    },
    invalidate,
    stop: unlisten,
  };
}
