/**
 * Small HTTP helpers for the job queue's integration tests: every call goes
 * over real HTTP to a real server.
 */
import { startTestService, type TestService, type TestServiceOptions } from '../helpers/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { DEFAULT_FIXTURE } from '../helpers/fixtures.ts';
import type { Role } from '../../runtime/ir/types.ts';
import { SystemScope } from '../../runtime/tenancy/index.ts';

/**
 * A database of our own prefix: the shared global setup drops every `svc_t_*`
 * database, which would pull the floor from under a run of ours in parallel
 * with another engineer's. Migrated for the fixture (a clone of its template).
 */
export const createJobsDatabase = (fixture = DEFAULT_FIXTURE) => createTestDatabase('svcjobs', { fixture });

/** startTestService on its own database, dropped by close(). */
export async function startJobsService(options: Omit<TestServiceOptions, 'database'> & { database?: TestDatabase } = {}) {
  const owned = options.database === undefined;
  const database = options.database ?? (await createJobsDatabase(options.fixture));
  // Workers make many requests from one address: the per-IP limiter (default 100/min) would throttle them.
  const env = { RATE_LIMIT_RPS: '10000000', ...options.env };
  const service = await startTestService({ ...options, env, database });
  const close = service.close.bind(service);
  return Object.assign(service, {
    async close() {
      await close();
      if (owned) await database.drop();
    },
  }) as TestService;
}

export interface Reply<T = any> {
  readonly status: number;
  readonly body: T;
}

export async function call<T = any>(
  url: string, method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const response = await fetch(url + path, {
    method,
    headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
export const workerHeader = (token: string) => ({ 'x-worker-token': token });

/** A user client: `as(role, tenant?)` mints a JWT and calls with it. */
export function userClient(service: TestService, role: Role, userId?: string, tenantId: string | null = null) {
  const token = service.token({ role, userId: userId ?? `user-${role}`, tenantId });
  return async <T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    call<T>(service.url, method, path, { body, headers: { ...bearer(await token), ...headers } });
}

/** Mints a worker token through the admin plane. */
export async function mintWorker(service: TestService, queues: string[], tenantId: string | null = null) {
  const admin = userClient(service, 'Admin', tenantId ? `admin-${tenantId}` : 'admin', tenantId);
  const reply = await admin('POST', '/jobs/workers', { name: `w-${queues.join('-')}`, queues });
  if (reply.status !== 201) throw new Error(`mint failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body as { id: string; token: string; queues: string[] };
}

/** A worker-plane client for one token. */
export function workerClient(service: TestService, token: string) {
  return <T = any>(path: string, body?: unknown) =>
    call<T>(service.url, 'POST', path, { body, headers: workerHeader(token) });
}

export async function waitFor<T>(check: () => Promise<T | null | undefined | false>, timeoutMs = 10_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() - started > timeoutMs) throw new Error('waitFor: timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The Job stream's event types, in order. */
export async function jobEvents(service: TestService, id: string): Promise<string[]> {
  const events = await service.ctx.services.events.history('Job', id, SystemScope.ALL);
  return events.map((event) => event.eventType);
}
