/**
 * The admin user API (CONTRACT section 5), Admin role only:
 * POST /auth/users, GET /auth/users, PATCH /auth/users/{id}.
 */
import type Router from '@koa/router';
import { newId } from '../ids.ts';
import type { Config } from '../config/index.ts';
import type { Db } from '../db/index.ts';
import { badRequest, conflict, notFound } from '../http/errors.ts';
import { requireRole } from './guard.ts';
import type { SessionAuthenticator } from './authenticator.ts';
import type { PasswordHasher } from './passwords.ts';
import { checkNewPassword, jsonObject, normaliseEmail, optionalString, parseRole } from './policy.ts';
import { syncUserSessions } from './sessions.ts';
import { adminUser, insertUser, isUniqueViolation, listUsers, patchUser, type PriorUser, type UserPatch, type UserRow } from './users.ts';
import { userActor, type AuditLog } from '../audit/index.ts';
import type Koa from 'koa';

export interface AdminRouteOptions {
  readonly db: Db;
  readonly auth: SessionAuthenticator;
  readonly hasher: PasswordHasher;
  readonly config: Config;
  readonly audit: AuditLog;
}

/** `{field: [old, new]}` of the fields the patch named. */
function patchChanges(user: UserRow & PriorUser, patch: UserPatch): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  if (patch.role !== undefined) changes.role = [user.prior_role, user.role];
  if (patch.tenantId !== undefined) changes.tenantId = [user.prior_tenant_id, user.tenant_id];
  if (patch.disabled !== undefined) changes.disabled = [user.prior_disabled, user.disabled];
  return changes;
}

export function mountAdminRoutes(router: Router, options: AdminRouteOptions): void {
  const { db, hasher, config, auth, audit } = options;
  const entry = (koa: Koa.Context, action: 'user.create' | 'user.update', user: UserRow, changes: Record<string, unknown>) => ({
    action, tenantId: user.tenant_id, actor: userActor(koa.state.principal), entityType: 'User', entityId: user.id,
    changes, request: audit.requestOf(koa),
  });
  const admin = requireRole(auth, ['Admin']);
  router.post('/auth/users', admin, async (ctx) => {
    const body = jsonObject(ctx.request.body);
    const email = normaliseEmail(body.email);
    const password = checkNewPassword(body.password, {
      minLength: config.auth.passwordMinLength, requireComplexity: config.auth.passwordRequireComplexity,
    });
    const role = parseRole(body.role ?? 'Viewer');
    const tenantId = optionalString(body, 'tenantId') ?? optionalString(body, 'tenant_id');
    try {
      const passwordHash = await hasher.hash(password);
      const user = await db.tx('svc-auth-create-user', async (t) => {
        const created = await insertUser(t, { id: newId(), email, passwordHash, role, tenantId });
        await audit.record(t, entry(ctx, 'user.create', created, { email, role, tenantId }));
        return created;
      });
      ctx.status = 201;
      ctx.body = adminUser(user);
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('email already registered');
      throw error;
    }
  });
  router.get('/auth/users', admin, async (ctx) => {
    const limit = boundedInt(ctx.query.limit, 100, 1, 1000, 'limit');
    const offset = boundedInt(ctx.query.offset, 0, 0, Number.MAX_SAFE_INTEGER, 'offset');
    ctx.body = { users: (await listUsers(db, limit, offset)).map(adminUser) };
  });
  router.patch('/auth/users/:id', admin, async (ctx) => {
    const patch = parsePatch(jsonObject(ctx.request.body));
    const user = await db.tx('svc-auth-patch-user', async (t) => {
      const updated = await patchUser(t, ctx.params.id, patch);
      // Live sessions take the new role/tenant; disabling is enforced by the authenticator's join.
      if (updated) await syncUserSessions(t, updated);
      if (updated) await audit.record(t, entry(ctx, 'user.update', updated, patchChanges(updated, patch)));
      return updated;
    });
    if (!user) throw notFound('user not found');
    auth.invalidate(`u:${user.id}`); // this instance at once; the others on the commit's notification
    ctx.body = adminUser(user);
  });
}

function parsePatch(body: Record<string, unknown>): UserPatch {
  const patch: { role?: UserPatch['role']; tenantId?: string | null; disabled?: boolean } = {};
  if (body.role !== undefined) patch.role = parseRole(body.role);
  const tenantKey = 'tenantId' in body ? 'tenantId' : 'tenant_id' in body ? 'tenant_id' : null;
  if (tenantKey) patch.tenantId = optionalString(body, tenantKey);
  if (body.disabled !== undefined) {
    if (typeof body.disabled !== 'boolean') throw badRequest('disabled must be a boolean', { field: 'disabled' });
    patch.disabled = body.disabled;
  }
  if (Object.keys(patch).length === 0) throw badRequest('nothing to change: send role, tenantId or disabled');
  return patch;
}

function boundedInt(raw: unknown, fallback: number, min: number, max: number, name: string): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (typeof raw !== 'string' || !Number.isInteger(value)) throw badRequest(`${name} must be an integer`, { field: name });
  return Math.min(max, Math.max(min, value));
}
