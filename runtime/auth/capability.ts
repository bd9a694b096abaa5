/**
 * The auth capability: users, sessions, the REST account routes, the admin
 * user API, OAuth sign-in, and the session-checking Authenticator that
 * replaces the signature-only one for every later capability.
 */
import { fileURLToPath } from 'node:url';
import type { Capability } from '../service/types.ts';
import { mountAdminRoutes } from './admin.ts';
import { createSessionAuthenticator } from './authenticator.ts';
import { bootstrapAdmin } from './bootstrap.ts';
import { mountOAuthRoutes } from './oauth/routes.ts';
import { PasswordHasher } from './passwords.ts';
import { mountAccountRoutes } from './routes.ts';
import { Accounts } from './service.ts';
import { pruneLoginAttempts } from './throttle.ts';

declare module '../service/types.ts' {
  interface Services {
    /** Account operations (issue a token pair for a user, ...). */
    accounts: Accounts;
  }
}

export const auth: Capability = {
  name: 'auth',
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const { db, config, log, router } = ctx;
    const hasher = new PasswordHasher(ctx.config.auth.argon2);
    const authenticator = await createSessionAuthenticator(db, ctx.notifier, ctx.services.tokens);
    ctx.services.auth = authenticator;
    const { audit } = ctx.services;
    const accounts = new Accounts({ db, config, tokens: ctx.services.tokens, hasher, log, invalidate: authenticator.invalidate, audit });
    ctx.services.accounts = accounts;
    await bootstrapAdmin(db, config, hasher, log, audit);
    await pruneLoginAttempts(db);
    mountAccountRoutes(router, {
      accounts, auth: authenticator, db, selfRegistration: config.auth.selfRegistration, trustForwardedFor: config.rateLimit.trustForwardedFor, audit,
    });
    mountAdminRoutes(router, { db, auth: authenticator, hasher, config, audit });
    mountOAuthRoutes(router, { providers: config.auth.oauth, db, accounts, log, audit });
    if (config.auth.oauth.length > 0) log.info({ providers: config.auth.oauth.map((p) => p.name) }, 'oauth providers');
    return { stop: () => authenticator.stop() };
  },
};
