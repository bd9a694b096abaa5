/**
 * Which user an OAuth sign-in is: the user linked to (provider, subject); else
 * a new Viewer when no account has the email; else the account with that
 * email, linked only when the provider vouches for the address. An
 * unverified email never reaches an existing account (an attacker could
 * otherwise claim an admin's address at a provider that does not check it).
 */
import { newId } from '../../ids.ts';
import type { Db } from '../../db/index.ts';
import { compile, sql } from '../../sql/index.ts';
import { forbidden } from '../../http/errors.ts';
import { normaliseEmail } from '../policy.ts';
import { findUserByEmail, findUserById, insertUserIfAbsent, type UserRow } from '../users.ts';
import type { ProviderIdentity } from './client.ts';

async function link(db: Db, provider: string, identity: ProviderIdentity, userId: string): Promise<void> {
  await db.none(compile(sql`
    insert into svc_oauth_identities (provider, subject, user_id, email)
     values (${sql.value(provider)}, ${sql.value(identity.subject)}, ${sql.value(userId)}, ${sql.value(normaliseEmail(identity.email))})
     on conflict (provider, subject) do nothing`));
}

async function linkedUser(db: Db, provider: string, subject: string): Promise<UserRow | null> {
  const row = await db.oneOrNone<{ user_id: string }>(compile(sql`
    select user_id from svc_oauth_identities where provider = ${sql.value(provider)} and subject = ${sql.value(subject)}`));
  return row ? findUserById(db, row.user_id) : null;
}

export async function userOfIdentity(db: Db, provider: string, identity: ProviderIdentity): Promise<UserRow> {
  const linked = await linkedUser(db, provider, identity.subject);
  if (linked) return linked;
  const email = normaliseEmail(identity.email);
  const existing = await findUserByEmail(db, email);
  if (existing && !identity.emailVerified) {
    throw forbidden(`${provider} does not confirm that ${email} is verified, so it cannot be linked to the existing account: `
      + 'sign in with that account\'s password, or verify the address at the provider');
  }
  // New OAuth users are Viewers without a tenant and without a password.
  const user = existing
    ?? (await insertUserIfAbsent(db, { id: newId(), email, passwordHash: null, role: 'Viewer', tenantId: null }))
    ?? ((await findUserByEmail(db, email)) as UserRow);
  await link(db, provider, identity, user.id);
  // A concurrent first sign-in may have linked the subject first: the link decides.
  return (await linkedUser(db, provider, identity.subject)) ?? user;
}
