/**
 * Admin bootstrap (specification, Authentication item 9): with ADMIN_EMAIL and
 * ADMIN_PASSWORD set, an Admin with that email is created once. A restart
 * neither duplicates it nor touches its password (a warning says when the
 * env password differs); ADMIN_RESET_PASSWORD=true resets the hash on this
 * boot. A new ADMIN_EMAIL seeds another admin. Instances booting together are
 * safe: the insert is `on conflict (email) do nothing`.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { newId } from '../ids.ts';
import type { Config } from '../config/index.ts';
import type { Db } from '../db/index.ts';
import type { Logger } from '../log/index.ts';
import { PasswordHasher } from './passwords.ts';
import { normaliseEmail } from './policy.ts';
import { revokeUserSessions } from './sessions.ts';
import { findUserByEmail, insertUserIfAbsent, setPasswordHash } from './users.ts';
import { SYSTEM_ACTOR, type AuditLog } from '../audit/index.ts';

export async function bootstrapAdmin(db: Db, config: Config, hasher: PasswordHasher, log: Logger, audit: AuditLog): Promise<void> {
  const entry = (action: 'user.create' | 'user.update', userId: string, changes: Record<string, unknown>) => ({
    action, tenantId: null, actor: SYSTEM_ACTOR, entityType: 'User', entityId: userId, changes,
  });
  const { adminEmail, adminPassword, adminResetPassword } = config.auth;
  if (!adminEmail || !adminPassword) return;
  let email: string;
  try {
    email = normaliseEmail(adminEmail);
  } catch {
    log.warn('ADMIN_EMAIL is not a valid email address: no admin seeded');
    return;
  }
  const existing = await findUserByEmail(db, email);
  if (!existing) {
    const passwordHash = await hasher.hash(adminPassword);
    const created = await db.tx('svc-admin-bootstrap', async (t) => {
      const inserted = await insertUserIfAbsent(t, { id: newId(), email, passwordHash, role: 'Admin', tenantId: null });
      if (inserted) await audit.record(t, entry('user.create', inserted.id, { email, role: 'Admin', tenantId: null }));
      return inserted;
    });
    if (created) {
      log.info({ email, userId: created.id }, 'admin user created from ADMIN_EMAIL');
      return;
    }
    // Another instance created it between our look-up and insert: treat it as existing.
  }
  const user = existing ?? (await findUserByEmail(db, email));
  if (!user) return;
  if (adminResetPassword) {
    const hash = await hasher.hash(adminPassword);
    await db.tx('svc-admin-reset', async (t) => {
      await setPasswordHash(t, user.id, hash);
      await revokeUserSessions(t, user.id, 'admin password reset');
      await audit.record(t, entry('user.update', user.id, { passwordReset: true }));
    });
    log.warn({ email, userId: user.id }, 'admin password reset from ADMIN_PASSWORD (ADMIN_RESET_PASSWORD=true); unset it now');
    return;
  }
  const same = (await hasher.verify(user.password_hash, adminPassword)).ok;
  if (!same) {
    log.warn({ email, userId: user.id },
      'ADMIN_PASSWORD differs from the stored password of ADMIN_EMAIL and was not applied; set ADMIN_RESET_PASSWORD=true to reset it');
  }
}

/** The development admin's email (`svc-gen dev` on a database with no user). */
export const DEV_ADMIN_EMAIL = 'dev-admin@example.com';

export interface DevAdmin {
  readonly email: string;
  readonly password: string;
  /** True when this start created it. */
  readonly created: boolean;
}

export interface DevAdminOptions {
  readonly db: Db;
  readonly config: Config;
  readonly log: Logger;
  readonly audit: AuditLog;
  /** Where the credentials are kept between starts (under `.svc/`, mode 0600): the banner repeats them. */
  readonly stateFile: string;
}

/**
 * `svc-gen dev` only: with no ADMIN_EMAIL/ADMIN_PASSWORD and no user at all, an
 * Admin with a random password is created, so that a first run can log in.
 * Its credentials are kept in `stateFile` and returned as long as they still
 * work; null when the database has users of its own (or ADMIN_* is set).
 */
export async function ensureDevAdmin(options: DevAdminOptions): Promise<DevAdmin | null> {
  const { db, config, log, audit, stateFile } = options;
  if (config.env === 'production' || (config.auth.adminEmail && config.auth.adminPassword)) return null;
  const hasher = new PasswordHasher(config.auth.argon2);
  const saved = readDevAdmin(stateFile);
  if (saved) {
    const user = await findUserByEmail(db, saved.email);
    if (user && !user.disabled && (await hasher.verify(user.password_hash, saved.password)).ok) return { ...saved, created: false };
  }
  if (await db.one<{ any: boolean }>('select exists (select 1 from svc_users) as any').then((r) => r.any)) return null;
  const password = `dev-${randomBytes(12).toString('base64url')}-7`;
  const passwordHash = await hasher.hash(password);
  const created = await db.tx('svc-dev-admin', async (t) => {
    const inserted = await insertUserIfAbsent(t, { id: newId(), email: DEV_ADMIN_EMAIL, passwordHash, role: 'Admin', tenantId: null });
    if (inserted) {
      await audit.record(t, {
        action: 'user.create', tenantId: null, actor: SYSTEM_ACTOR, entityType: 'User', entityId: inserted.id,
        changes: { email: DEV_ADMIN_EMAIL, role: 'Admin', tenantId: null },
      });
    }
    return inserted;
  });
  if (!created) return null;
  mkdirSync(dirname(stateFile), { recursive: true });
  writeFileSync(stateFile, `${JSON.stringify({ email: DEV_ADMIN_EMAIL, password })}\n`, { mode: 0o600 });
  log.info({ email: DEV_ADMIN_EMAIL, userId: created.id }, 'development admin created (no user existed and ADMIN_EMAIL is unset)');
  return { email: DEV_ADMIN_EMAIL, password, created: true };
}

function readDevAdmin(file: string): { email: string; password: string } | null {
  if (!existsSync(file)) return null;
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as { email?: unknown; password?: unknown };
    return typeof value.email === 'string' && typeof value.password === 'string' ? { email: value.email, password: value.password } : null;
  } catch {
    return null;
  }
}
