/**
 * Long-lived connections (graphql-ws subscriptions) follow their session: a
 * socket is checked again whenever auth announces a change on SESSIONS_CHANNEL
 * (logout, refresh-token reuse, a disabled user, a role or tenant change) and
 * closed with SESSION_CLOSE when its session is no longer live or its tenant
 * changed; a new role replaces the connection's principal, so read access is
 * re-checked with it on the next delivered change. A socket is also closed
 * when its access token expires: the client reconnects with a fresh token.
 */
import { decodeJwt } from 'jose/jwt/decode';
import type { Notifier } from '../db/index.ts';
import type { Logger } from '../log/index.ts';
import type { Authenticator } from './guard.ts';
import { SESSIONS_CHANNEL } from './sessions.ts';
import { InvalidTokenError, type Principal } from './tokens.ts';

/** Close code of a socket whose session ended, changed tenant, or whose token expired (documented in docs/auth.md). */
export const SESSION_CLOSE = 4001;

/** Longest delay setTimeout accepts; a later expiry is re-armed when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface WatchedConnection {
  readonly token: string;
  /** Replaced when the session's role changes. */
  principal: Principal;
  close(code: number, reason: string): void;
}

export interface SessionWatch {
  /** Watches `connection` until the returned function is called (on close). */
  add(connection: WatchedConnection): () => void;
  stop(): Promise<void>;
}

/** When the token stops being valid (ms since the epoch), or null when it carries no expiry. */
export function tokenExpiresAt(token: string): number | null {
  try {
    const { exp } = decodeJwt(token);
    return typeof exp === 'number' ? exp * 1000 : null;
  } catch {
    return null;
  }
}

function concerns(key: string, principal: Principal): boolean {
  if (key.startsWith('s:')) return principal.sessionId === key.slice(2);
  if (key.startsWith('u:')) return principal.userId === key.slice(2);
  return true;
}

export async function watchSessions(notifier: Notifier, auth: Authenticator, log: Logger): Promise<SessionWatch> {
  const connections = new Set<WatchedConnection>();
  const recheck = async (connection: WatchedConnection) => {
    try {
      const now = await auth.authenticate(connection.token);
      if (now.tenantId !== connection.principal.tenantId) return connection.close(SESSION_CLOSE, 'session changed');
      connection.principal = now;
    } catch (error) {
      if (error instanceof InvalidTokenError) return connection.close(SESSION_CLOSE, 'session revoked');
      log.warn({ err: error }, 'could not re-check the session of a subscription socket');
    }
  };
  const unlisten = await notifier.listen(SESSIONS_CHANNEL, (key) => {
    for (const connection of connections) if (concerns(key, connection.principal)) void recheck(connection);
  });
  return {
    add(connection) {
      connections.add(connection);
      const timer = expiryTimer(connection);
      return () => {
        connections.delete(connection);
        clearTimeout(timer.current);
      };
    },
    async stop() {
      connections.clear();
      await unlisten();
    },
  };
}

function expiryTimer(connection: WatchedConnection): { current: NodeJS.Timeout | undefined } {
  const timer: { current: NodeJS.Timeout | undefined } = { current: undefined };
  const expiresAt = tokenExpiresAt(connection.token);
  if (expiresAt === null) return timer;
  const arm = () => {
    const left = expiresAt - Date.now();
    if (left <= 0) return connection.close(SESSION_CLOSE, 'token expired');
    timer.current = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    timer.current.unref();
  };
  arm();
  return timer;
}
