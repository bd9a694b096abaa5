/** Small HTTP helpers for the auth and edge tests (real fetch against a real server). */
import bcrypt from 'bcryptjs';
import { createTestDatabase } from '../helpers/db.ts';
import { DEFAULT_FIXTURE } from '../helpers/fixtures.ts';
import { startTestService, type TestService, type TestServiceOptions } from '../helpers/service.ts';

export interface Reply {
  readonly status: number;
  readonly body: any;
  readonly headers: Headers;
}

export async function call(base: string, method: string, path: string, options: {
  body?: unknown; token?: string; headers?: Record<string, string>;
} = {}): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(base + path, {
    method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body), redirect: 'manual',
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body, headers: response.headers };
}

export const post = (base: string, path: string, body?: unknown, token?: string) => call(base, 'POST', path, { body, token });
export const get = (base: string, path: string, token?: string) => call(base, 'GET', path, { token });

/** Inserts a user directly (e.g. with a legacy bcrypt hash), as a migration from another system would. */
export async function insertUser(svc: TestService, user: {
  id: string; email: string; passwordHash: string | null; role?: string; tenantId?: string | null;
}): Promise<void> {
  await svc.ctx.db.none(
    'insert into svc_users (id, email, password_hash, role, tenant_id) values ($1, $2, $3, $4, $5)',
    [user.id, user.email, user.passwordHash, user.role ?? 'Viewer', user.tenantId ?? null],
  );
}

export const bcryptHash = (password: string) => bcrypt.hash(password, 4);

/** Creates a user through the admin API and logs in; returns the login reply body. */
export async function createAndLogin(svc: TestService, email: string, password: string, role = 'Viewer', tenantId?: string) {
  const admin = await svc.token({ role: 'Admin', userId: 'bootstrap-admin' });
  const created = await post(svc.url, '/auth/users', { email, password, role, tenantId }, admin);
  if (created.status !== 201) throw new Error(`create user failed: ${created.status} ${JSON.stringify(created.body)}`);
  const login = await post(svc.url, '/auth/login', { email, password });
  if (login.status !== 200) throw new Error(`login failed: ${login.status} ${JSON.stringify(login.body)}`);
  return login.body as { token: string; refresh_token: string; user: { id: string; email: string; role: string } };
}

/**
 * A database of our own prefix: the shared global setup drops every `svc_t_*`
 * database when any test run starts, which kills a run already in progress
 * when several people test on one machine. Migrated for the fixture (a clone of its template).
 */
export const ownDatabase = (fixture = DEFAULT_FIXTURE) => createTestDatabase('svc_auth', { fixture });

/** startTestService on an own-prefix database, dropped by close(). */
export async function startOwnService(options: TestServiceOptions = {}): Promise<TestService> {
  const database = await ownDatabase(options.fixture);
  const svc = await startTestService({ ...options, database });
  return { ...svc, close: async () => { await svc.close(); await database.drop(); } };
}
