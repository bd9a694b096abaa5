/** The svc_users table: the only module that writes it. */
import type { Db, Tx } from '../db/index.ts';
import type { Role } from '../ir/types.ts';
import { compile, sql } from '../sql/index.ts';

export interface UserRow {
  readonly id: string;
  readonly email: string;
  readonly password_hash: string | null;
  readonly role: Role;
  readonly tenant_id: string | null;
  readonly first_name: string | null;
  readonly last_name: string | null;
  readonly disabled: boolean;
  readonly created_at: string;
  readonly updated_at: string;
}

export interface NewUser {
  readonly id: string;
  readonly email: string;
  readonly passwordHash: string | null;
  readonly role: Role;
  readonly tenantId: string | null;
  readonly firstName?: string | null;
  readonly lastName?: string | null;
}

export interface UserPatch {
  readonly role?: Role;
  readonly tenantId?: string | null;
  readonly disabled?: boolean;
}

/** Postgres' unique_violation: on svc_users only the email can collide. */
export const UNIQUE_VIOLATION = '23505';

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === UNIQUE_VIOLATION;
}

type Q = Db | Tx;

/** Inserts; throws a unique_violation (see isUniqueViolation) when the email is taken. */
export function insertUser(q: Q, user: NewUser): Promise<UserRow> {
  return q.one<UserRow>(compile(sql`
    insert into svc_users (id, email, password_hash, role, tenant_id, first_name, last_name)
     values (${sql.value(user.id)}, ${sql.value(user.email)}, ${sql.value(user.passwordHash)}, ${sql.value(user.role)}, ${sql.value(user.tenantId)},
       ${sql.value(user.firstName ?? null)}, ${sql.value(user.lastName ?? null)}) returning *`));
}

/** Inserts unless the email exists; null when it did (no error: safe under concurrency). */
export function insertUserIfAbsent(q: Q, user: NewUser): Promise<UserRow | null> {
  return q.oneOrNone<UserRow>(compile(sql`
    insert into svc_users (id, email, password_hash, role, tenant_id, first_name, last_name)
     values (${sql.value(user.id)}, ${sql.value(user.email)}, ${sql.value(user.passwordHash)}, ${sql.value(user.role)}, ${sql.value(user.tenantId)},
       ${sql.value(user.firstName ?? null)}, ${sql.value(user.lastName ?? null)}) on conflict (email) do nothing returning *`));
}

export function findUserByEmail(q: Q, email: string): Promise<UserRow | null> {
  return q.oneOrNone<UserRow>(compile(sql`select * from svc_users where email = ${sql.value(email)}`));
}

export function findUserById(q: Q, id: string): Promise<UserRow | null> {
  return q.oneOrNone<UserRow>(compile(sql`select * from svc_users where id = ${sql.value(id)}`));
}

export function listUsers(q: Q, limit: number, offset: number): Promise<UserRow[]> {
  return q.manyOrNone<UserRow>(compile(sql`
    select * from svc_users order by id limit ${sql.value(limit)} offset ${sql.value(offset)}`));
}

export function setPasswordHash(q: Q, id: string, hash: string): Promise<null> {
  return q.none(compile(sql`
    update svc_users set password_hash = ${sql.value(hash)}, updated_at = now() where id = ${sql.value(id)}`));
}

/** The patchable fields before a patch (for the audit entry's `{field: [old, new]}`). */
export interface PriorUser {
  readonly prior_role: Role;
  readonly prior_tenant_id: string | null;
  readonly prior_disabled: boolean;
}

/** Applies the fields present in `patch`; null when the user does not exist. Returns the old values beside the new row. */
export function patchUser(q: Q, id: string, patch: UserPatch): Promise<(UserRow & PriorUser) | null> {
  return q.oneOrNone<UserRow & PriorUser>(compile(sql`
    update svc_users u set
        role = case when ${sql.value(patch.role !== undefined, 'boolean')} then ${sql.value(patch.role ?? null)} else u.role end,
        tenant_id = case when ${sql.value(patch.tenantId !== undefined, 'boolean')} then ${sql.value(patch.tenantId ?? null)} else u.tenant_id end,
        disabled = case when ${sql.value(patch.disabled !== undefined, 'boolean')} then ${sql.value(patch.disabled ?? null)} else u.disabled end,
        updated_at = now()
       from (select id, role, tenant_id, disabled from svc_users where id = ${sql.value(id)} for update) prior
      where u.id = prior.id
      returning u.*, prior.role as prior_role, prior.tenant_id as prior_tenant_id, prior.disabled as prior_disabled`));
}

/** The user as auth responses show it: role in lower case. */
export function publicUser(user: UserRow, withTenant = true): Record<string, unknown> {
  const shown: Record<string, unknown> = { id: user.id, email: user.email, role: user.role.toLowerCase() };
  if (withTenant) shown.tenant_id = user.tenant_id;
  return shown;
}

/** What the admin user API shows: never the hash. */
export function adminUser(user: UserRow): Record<string, unknown> {
  return {
    ...publicUser(user), firstName: user.first_name, lastName: user.last_name,
    disabled: user.disabled, createdAt: user.created_at, updatedAt: user.updated_at,
  };
}
