/**
 * Admin bootstrap (specification, Authentication item 9): with ADMIN_EMAIL and
 * ADMIN_PASSWORD set, an Admin with that email is created once. A restart
 * neither duplicates it nor touches its password (a warning says when the
 * env password differs); ADMIN_RESET_PASSWORD=true resets the hash on this
 * boot. A new ADMIN_EMAIL seeds another admin. Instances booting together are
 * safe: the insert is `on conflict (email) do nothing`.
 */
import { newId } from '../ids.ts';
import type { Config } from '../config/index.ts';
import type { Db } from '../db/index.ts';
import type { Logger } from '../log/index.ts';
import type { PasswordHasher } from './passwords.ts';
import { normaliseEmail } from './policy.ts';
import { revokeUserSessions } from './sessions.ts';
import { findUserByEmail, insertUserIfAbsent, setPasswordHash } from './users.ts';

export async function bootstrapAdmin(db: Db, config: Config, hasher: PasswordHasher, log: Logger): Promise<void> {
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
    const created = await insertUserIfAbsent(db, {
      id: newId(), email, passwordHash: await hasher.hash(adminPassword), role: 'Admin', tenantId: null,
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
