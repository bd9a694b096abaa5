/**
 * The account operations behind the REST routes: log in, register, refresh,
 * log out, and issuing a token pair for a user (also used by OAuth).
 */
import { newId } from '../ids.ts';
import type { Config } from '../config/index.ts';
import type { Db } from '../db/index.ts';
import { HttpError, conflict, forbidden, unauthorized } from '../http/errors.ts';
import type { Logger } from '../log/index.ts';
import type { PasswordHasher } from './passwords.ts';
import { checkNewPassword, normaliseEmail, optionalString, requirePassword } from './policy.ts';
import { createSession, revokeSession, rotateRefreshToken } from './sessions.ts';
import { claimLoginAttempt, clearLoginAttempts } from './throttle.ts';
import type { Principal, TokenSigner } from './tokens.ts';
import { ANONYMOUS_ACTOR, type AuditAction, type AuditLog, type AuditRequest } from '../audit/index.ts';
import {
  findUserByEmail, findUserById, insertUser, isUniqueViolation, publicUser, setPasswordHash, type UserRow,
} from './users.ts';

export interface TokenPair {
  readonly token: string;
  readonly refresh_token: string;
  readonly user: Record<string, unknown>;
}

export interface AccountDeps {
  readonly db: Db;
  readonly config: Config;
  readonly tokens: TokenSigner;
  readonly hasher: PasswordHasher;
  readonly log: Logger;
  /**
   * Drops this instance's cached session state (`s:<sessionId>`, `u:<userId>`)
   * once a revocation has committed: the pg_notify that tells every instance
   * arrives asynchronously, and the caller's next request must already see it.
   */
  readonly invalidate: (key: string) => void;
  readonly audit: AuditLog;
}

/** What an account operation's audit entry needs from its HTTP request (null: in-process). */
export type Origin = AuditRequest | null;

const asActor = (user: { id: string; role: string }) => ({ kind: 'user' as const, id: user.id, role: user.role });

const INVALID_CREDENTIALS = 'invalid email or password';

export class Accounts {
  constructor(private readonly deps: AccountDeps) {}

  /** Opens a session for `user` and signs its first token pair; `action` is audited in the session's transaction. */
  async issue(user: UserRow, withTenant = false, action: AuditAction = 'auth.login', origin: Origin = null): Promise<TokenPair> {
    const { db, config, audit } = this.deps;
    const session = await db.tx('svc-auth-session', async (t) => {
      const opened = await createSession(t, user, config.auth.refreshTokenTtlSecs);
      await audit.record(t, {
        action, tenantId: user.tenant_id, actor: asActor(user), entityType: 'User', entityId: user.id, request: origin,
      });
      return opened;
    });
    return this.pair(user, session.sessionId, session.refreshToken, withTenant);
  }

  /** `client`: the caller's address, a key of the login throttle (throttle.ts); `origin`: the request, for audit. */
  async login(body: Record<string, unknown>, client: string, origin: Origin = null): Promise<TokenPair> {
    const email = normaliseEmail(body.email);
    const password = requirePassword(body.password);
    const failed = (user: UserRow | null, reason: string) => this.deps.audit.denied({
      action: 'auth.login_failed', tenantId: user?.tenant_id ?? null, actor: ANONYMOUS_ACTOR,
      entityType: 'User', entityId: user?.id ?? null, changes: { email, reason }, request: origin,
    });
    const claim = await claimLoginAttempt(this.deps.db, email, client);
    if (!claim.allowed) {
      await failed(null, 'throttled');
      throw new HttpError(429, 'rate_limited', { retryAfter: claim.retryAfterSecs, reason: 'too many failed login attempts' },
        { 'Retry-After': String(claim.retryAfterSecs) });
    }
    const user = await findUserByEmail(this.deps.db, email);
    const verdict = await this.deps.hasher.verify(user?.password_hash ?? null, password);
    if (!user || !verdict.ok) {
      await failed(user, 'invalid credentials');
      throw unauthorized(INVALID_CREDENTIALS);
    }
    if (user.disabled) {
      await failed(user, 'account disabled');
      throw forbidden('account disabled');
    }
    await clearLoginAttempts(this.deps.db, email);
    if (verdict.rehash) await this.upgradeHash(user, password);
    return this.issue(user, false, 'auth.login', origin);
  }

  async register(body: Record<string, unknown>, origin: Origin = null): Promise<TokenPair> {
    const { auth } = this.deps.config;
    const email = normaliseEmail(body.email);
    const password = checkNewPassword(body.password, { minLength: auth.passwordMinLength, requireComplexity: auth.passwordRequireComplexity });
    const id = newId();
    const tenant = auth.selfRegistrationTenant;
    const tenantId = tenant.mode === 'none' ? null : tenant.mode === 'per-user' ? id : tenant.tenantId;
    const passwordHash = await this.deps.hasher.hash(password);
    try {
      const user = await insertUser(this.deps.db, {
        id, email, passwordHash, role: auth.selfRegistrationRole, tenantId,
        firstName: optionalString(body, 'firstName'), lastName: optionalString(body, 'lastName'),
      });
      return await this.issue(user, true, 'auth.register', origin);
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('email already registered');
      throw error;
    }
  }

  async refresh(refreshToken: string, origin: Origin = null): Promise<TokenPair> {
    const ttl = this.deps.config.auth.refreshTokenTtlSecs;
    const { audit } = this.deps;
    const outcome = await this.deps.db.tx('svc-auth-refresh', async (t) => {
      const rotation = await rotateRefreshToken(t, refreshToken, ttl);
      // Committed, not thrown: the revocation must survive the 401 that follows.
      if (rotation.kind === 'reused') await revokeSession(t, rotation.sessionId, 'refresh token reuse');
      if (rotation.kind !== 'invalid') {
        await audit.record(t, {
          action: rotation.kind === 'reused' ? 'auth.refresh_reuse' : 'auth.refresh',
          outcome: rotation.kind === 'reused' ? 'denied' : 'success', tenantId: rotation.tenantId,
          actor: rotation.kind === 'reused' ? ANONYMOUS_ACTOR : { kind: 'user', id: rotation.userId, role: rotation.role },
          entityType: 'User', entityId: rotation.userId, request: origin,
        });
      }
      return rotation;
    });
    if (outcome.kind === 'invalid') {
      await audit.denied({ action: 'auth.refresh', tenantId: null, actor: ANONYMOUS_ACTOR, request: origin });
    }
    if (outcome.kind === 'reused') {
      this.deps.invalidate(`s:${outcome.sessionId}`);
      this.deps.log.warn({ sessionId: outcome.sessionId }, 'refresh token reuse: session revoked');
    }
    if (outcome.kind !== 'rotated') throw unauthorized('invalid refresh token');
    const user = await findUserById(this.deps.db, outcome.userId);
    if (!user || user.disabled) throw unauthorized('invalid refresh token');
    return this.pair(user, outcome.sessionId, outcome.refreshToken, false);
  }

  async logout(principal: Pick<Principal, 'userId' | 'role' | 'tenantId'> & { sessionId: string }, origin: Origin = null): Promise<void> {
    const { sessionId } = principal;
    await this.deps.db.tx('svc-auth-logout', async (t) => {
      await revokeSession(t, sessionId, 'logout');
      await this.deps.audit.record(t, {
        action: 'auth.logout', tenantId: principal.tenantId, actor: { kind: 'user', id: principal.userId, role: principal.role },
        entityType: 'User', entityId: principal.userId, request: origin,
      });
    });
    this.deps.invalidate(`s:${sessionId}`);
  }

  private async pair(user: UserRow, sessionId: string, refreshToken: string, withTenant: boolean): Promise<TokenPair> {
    const token = await this.deps.tokens.sign({
      userId: user.id, role: user.role, tenantId: user.tenant_id, sessionId, email: user.email,
    });
    return { token, refresh_token: refreshToken, user: publicUser(user, withTenant) };
  }

  /** Legacy bcrypt (or outdated argon2 parameters) -> argon2id, now that we know the password. */
  private async upgradeHash(user: UserRow, password: string): Promise<void> {
    try {
      await setPasswordHash(this.deps.db, user.id, await this.deps.hasher.hash(password));
    } catch (error) {
      this.deps.log.warn({ err: error, userId: user.id }, 'password rehash failed; will retry on next login');
    }
  }
}
