/** The svc_users table: the only module that writes it. */
import type { Db, Tx } from '../db/index.ts';
import type { Role } from '../ir/types.ts';

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
  return q.one<UserRow>(
    `insert into svc_users (id, email, password_hash, role, tenant_id, first_name, last_name)
     values ($1, $2, $3, $4, $5, $6, $7) returning *`,
    [user.id, user.email, user.passwordHash, user.role, user.tenantId, user.firstName ?? null, user.lastName ?? null],
  );
}

/** Inserts unless the email exists; null when it did (no error: safe under concurrency). */
export function insertUserIfAbsent(q: Q, user: NewUser): Promise<UserRow | null> {
  return q.oneOrNone<UserRow>(
    `insert into svc_users (id, email, password_hash, role, tenant_id, first_name, last_name)
     values ($1, $2, $3, $4, $5, $6, $7) on conflict (email) do nothing returning *`,
    [user.id, user.email, user.passwordHash, user.role, user.tenantId, user.firstName ?? null, user.lastName ?? null],
  );
}

export function findUserByEmail(q: Q, email: string): Promise<UserRow | null> {
  return q.oneOrNone<UserRow>('select * from svc_users where email = $1', [email]);
}

export function findUserById(q: Q, id: string): Promise<UserRow | null> {
  return q.oneOrNone<UserRow>('select * from svc_users where id = $1', [id]);
}

export function listUsers(q: Q, limit: number, offset: number): Promise<UserRow[]> {
  return q.manyOrNone<UserRow>('select * from svc_users order by id limit $1 offset $2', [limit, offset]);
}

export function setPasswordHash(q: Q, id: string, hash: string): Promise<null> {
  return q.none('update svc_users set password_hash = $2, updated_at = now() where id = $1', [id, hash]);
}

/** The patchable fields before a patch (for the audit entry's `{field: [old, new]}`). */
export interface PriorUser {
  readonly prior_role: Role;
  readonly prior_tenant_id: string | null;
  readonly prior_disabled: boolean;
}

/** Applies the fields present in `patch`; null when the user does not exist. Returns the old values beside the new row. */
export function patchUser(q: Q, id: string, patch: UserPatch): Promise<(UserRow & PriorUser) | null> {
  return q.oneOrNone<UserRow & PriorUser>(
    `update svc_users u set
        role = case when $2 then $3 else u.role end,
        tenant_id = case when $4 then $5 else u.tenant_id end,
        disabled = case when $6 then $7 else u.disabled end,
        updated_at = now()
       from (select id, role, tenant_id, disabled from svc_users where id = $1 for update) prior
      where u.id = prior.id
      returning u.*, prior.role as prior_role, prior.tenant_id as prior_tenant_id, prior.disabled as prior_disabled`,
    [id, patch.role !== undefined, patch.role ?? null, patch.tenantId !== undefined, patch.tenantId ?? null,
      patch.disabled !== undefined, patch.disabled ?? null],
  );
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
