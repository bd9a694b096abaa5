/**
 * A token is checked at the upgrade, but a connection lives on. The auth
 * capability announces every logout, revocation and user change on
 * SESSIONS_CHANNEL (`s:<sessionId>`, `u:<userId>`, or anything else for
 * "all"); the connections concerned are checked again and closed with 4001
 * when their session is no longer live or their role or tenant changed.
 * The auth capability listens first, so its cache is already cleared.
 */
import { InvalidTokenError, SESSIONS_CHANNEL, type Authenticator } from '../auth/index.ts';
import type { Notifier } from '../db/index.ts';
import type { Logger } from '../log/index.ts';
import type { Session } from './session.ts';

export const SESSION_REVOKED_CLOSE = 4001;

export function watchRevocations(
  notifier: Notifier, sessions: ReadonlySet<Session>, auth: Authenticator, log: Logger,
): Promise<() => Promise<void>> {
  return notifier.listen(SESSIONS_CHANNEL, (key) => {
    for (const session of sessions) if (concerns(key, session)) void recheck(session, auth, log);
  });
}

function concerns(key: string, session: Session): boolean {
  if (key.startsWith('s:')) return session.principal.sessionId === key.slice(2);
  if (key.startsWith('u:')) return session.userId === key.slice(2);
  return true;
}

async function recheck(session: Session, auth: Authenticator, log: Logger): Promise<void> {
  try {
    const now = await auth.authenticate(session.token);
    if (now.role === session.principal.role && now.tenantId === session.principal.tenantId) return;
  } catch (error) {
    if (!(error instanceof InvalidTokenError)) {
      log.warn({ err: error }, 'realtime: could not re-check a session');
      return;
    }
  }
  session.ws.close(SESSION_REVOKED_CLOSE, 'session revoked');
}
