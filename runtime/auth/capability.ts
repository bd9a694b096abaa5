/**
 * The auth capability: users, sessions, the REST account routes, the admin
 * user API, OAuth sign-in, and the session-checking Authenticator that
 * replaces the signature-only one for every later capability.
 */
import { fileURLToPath } from 'node:url';
import { defineCapability } from '../core/index.ts';
import type { Authenticator } from './guard.ts';
import { TokenSigner } from './tokens.ts';
import { mountAdminRoutes } from './admin.ts';
import { createSessionAuthenticator } from './authenticator.ts';
import { bootstrapAdmin } from './bootstrap.ts';
import { mountOAuthRoutes } from './oauth/routes.ts';
import { PasswordHasher } from './passwords.ts';
import { mountAccountRoutes } from './routes.ts';
import { Accounts } from './service.ts';
import { periodic } from '../core/periodic.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import { PRUNE_EVERY_MS, pruneLoginAttempts } from './throttle.ts';

declare module '../core/capability.ts' {
  interface Services {
    tokens: TokenSigner;
    /** Session-checking: a revoked session's token is refused. */
    auth: Authenticator;
    /** Account operations (issue a token pair for a user, ...). */
    accounts: Accounts;
  }
}

export const auth = defineCapability({
  name: 'auth',
  provides: ['tokens', 'auth', 'accounts'],
  requires: ['audit'],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const { db, config, log, router } = ctx;
    const hasher = new PasswordHasher(ctx.config.auth.argon2);
    const tokens = new TokenSigner(config.auth.jwtSecret, config.auth.accessTokenTtlSecs);
    ctx.services.tokens = tokens;
    const authenticator = await createSessionAuthenticator(db, ctx.notifier, tokens);
    ctx.services.auth = authenticator;
    const { audit } = ctx.services;
    const accounts = new Accounts({ db, config, tokens, hasher, log, invalidate: authenticator.invalidate, audit });
    ctx.services.accounts = accounts;
    await bootstrapAdmin(db, config, hasher, log, audit);
    mountAccountRoutes(router, {
      accounts, auth: authenticator, db, selfRegistration: config.auth.selfRegistration, trustForwardedFor: config.rateLimit.trustForwardedFor, audit,
      refreshTokenTtlSecs: config.auth.refreshTokenTtlSecs,
    });
    mountAdminRoutes(router, { db, auth: authenticator, hasher, config, audit });
    mountOAuthRoutes(router, { providers: config.auth.oauth, db, accounts, log, audit, refreshTokenTtlSecs: config.auth.refreshTokenTtlSecs });
    if (config.auth.oauth.length > 0) log.info({ providers: config.auth.oauth.map((p) => p.name) }, 'oauth providers');
    // Idle throttle counts are forgotten by a periodic sweep (index-backed batches), never by the start.
    let stopping = false;
    const sweep = periodic(db, log, {
      name: 'login-throttle-sweep', everyMs: PRUNE_EVERY_MS, lockKey: LOCK_KEYS.periodicLoginThrottleSweep,
      async run() {
        const pruned = await pruneLoginAttempts(db, () => stopping);
        if (pruned > 0) log.info({ pruned }, 'login throttle sweep');
      },
    });
    return {
      async stop() {
        stopping = true;
        await sweep.stop();
        await authenticator.stop();
      },
    };
  },
});
