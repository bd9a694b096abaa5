/** Audit tests: a crm service on its own database, and small HTTP helpers. */
import { createTestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService, type TestServiceOptions } from '../helpers/service.ts';
import type { Role } from '../../runtime/ir/types.ts';

export const CREATE = 'mutation($model: String!, $data: JSON!) { create(model: $model, data: $data) }';
export const UPDATE = 'mutation($model: String!, $id: ID!, $data: JSON!) { update(model: $model, id: $id, data: $data) }';
export const UPDATE_MANY = 'mutation($model: String!, $where: JSON!, $data: JSON!) { updateMany(model: $model, where: $where, data: $data) }';
export const DELETE = 'mutation($model: String!, $id: ID!) { delete(model: $model, id: $id) }';
export const RESTORE = 'mutation($model: String!, $id: ID!) { restore(model: $model, id: $id) }';
export const HARD_DELETE = 'mutation($model: String!, $id: ID!) { hardDelete(model: $model, id: $id) }';

export async function startAuditService(options: TestServiceOptions = {}): Promise<TestService> {
  const database = options.database ?? (await createTestDatabase('svc_aud', { fixture: options.fixture ?? 'crm' }));
  const service = await startTestService({
    fixture: 'crm', ...options, database, env: { RATE_LIMIT_RPS: '1000000', ...options.env },
  });
  if (options.database) return service;
  return { ...service, close: async () => { await service.close(); await database.drop(); } };
}

export interface Client {
  readonly userId: string;
  readonly token: string;
  gql(query: string, variables?: Record<string, unknown>): Promise<{ status: number; body: any; text: string }>;
  get(path: string, headers?: Record<string, string>): Promise<{ status: number; body: any; text: string }>;
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: any; text: string }>;
}

export interface As {
  readonly role: Role;
  readonly tenantId?: string | null;
  readonly userId?: string;
  readonly header?: string;
}

async function send(url: string, init: RequestInit) {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: any = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: response.status, body, text };
}

export async function clientFor(service: TestService, as: As): Promise<Client> {
  const userId = as.userId ?? `${as.role.toLowerCase()}-${as.tenantId ?? 'global'}`;
  const token = await service.token({ role: as.role, tenantId: as.tenantId ?? null, userId });
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  if (as.header) headers['x-tenant-id'] = as.header;
  return {
    userId,
    token,
    gql: (query, variables) => send(`${service.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) }),
    get: (path, extra = {}) => send(`${service.url}${path}`, { headers: { ...headers, ...extra } }),
    request: (method, path, body) => send(`${service.url}${path}`, {
      method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  };
}

/** Creates a record; fails the test with the response on any error. */
export async function create(client: Client, model: string, data: Record<string, unknown>): Promise<any> {
  const r = await client.gql(CREATE, { model, data });
  if (!r.body?.data?.create) throw new Error(`create ${model} failed: ${r.status} ${r.text}`);
  return r.body.data.create;
}

/** Every entry the route returns, following cursors. */
export async function allEntries(client: Client, path: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes('?') ? '&' : '?';
    const r = await client.get(`${path}${sep}limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
    items.push(...r.body.items);
    cursor = r.body.nextCursor;
  } while (cursor);
  return items;
}
