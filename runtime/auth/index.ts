export { TokenSigner, InvalidTokenError, type Principal } from './tokens.ts';
export {
  bearerToken, principalOf, requireUser, requireRole, requireAdmin, requireAdminOrManager, authenticateOr503,
  type Authenticator,
} from './guard.ts';
export { auth } from './capability.ts';
export { createSessionAuthenticator, type SessionAuthenticator } from './authenticator.ts';
export { Accounts, type TokenPair } from './service.ts';
export { PasswordHasher, type Argon2Params } from './passwords.ts';
export { SESSIONS_CHANNEL } from './sessions.ts';
export { watchSessions, tokenExpiresAt, SESSION_CLOSE, type SessionWatch, type WatchedConnection } from './watch.ts';
export { ensureDevAdmin, DEV_ADMIN_EMAIL, type DevAdmin } from './bootstrap.ts';
