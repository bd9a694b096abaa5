export { TokenSigner, InvalidTokenError, type Principal } from './tokens.ts';
export {
  bearerToken, principalOf, requireUser, requireRole, requireAdmin, requireAdminOrManager, resolveTenant,
  type Authenticator,
} from './guard.ts';
export { auth } from './capability.ts';
export { createSessionAuthenticator, type SessionAuthenticator } from './authenticator.ts';
export { Accounts, type TokenPair } from './service.ts';
export { PasswordHasher, type Argon2Params } from './passwords.ts';
export { SESSIONS_CHANNEL } from './sessions.ts';
