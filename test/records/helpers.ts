/** A small GraphQL-over-HTTP client for the records tests (real fetch, real server). */
import { resolve } from 'node:path';
import type { Role } from '../../runtime/ir/types.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService, type TestServiceOptions } from '../helpers/service.ts';

export const RECORDS_FIXTURE = resolve(import.meta.dirname, 'fixtures', 'records', 'schema.ts');

export interface GqlResponse {
  readonly status: number;
  readonly body: any;
  readonly data: any;
  readonly errors: Array<{ message: string; extensions: { code: string; field?: string } }> | undefined;
  /** The first error's code, or undefined. */
  readonly code: string | undefined;
}

export type Gql = (query: string, variables?: Record<string, unknown>) => Promise<GqlResponse>;

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<GqlResponse> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as any;
  return { status: response.status, body: json, data: json.data, errors: json.errors, code: json.errors?.[0]?.extensions?.code };
}

export interface As {
  readonly role: Role;
  readonly tenantId?: string | null;
  readonly userId?: string;
  /** X-Tenant-ID header to send. */
  readonly header?: string;
}

/** A client acting as one user. */
export async function clientFor(service: TestService, as: As): Promise<Gql> {
  const token = await service.token({ role: as.role, tenantId: as.tenantId ?? null, userId: as.userId });
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (as.header) headers['x-tenant-id'] = as.header;
  return (query, variables) => post(service.url, { query, variables }, headers);
}

/**
 * A records test service. Its database has its own prefix: the suite's global
 * setup drops every `svc_t_*` database, including those of test runs going on
 * in parallel. Tests send hundreds of requests from one address, so the per-IP
 * rate limit is lifted.
 */
export async function startRecordsService(options: TestServiceOptions = {}): Promise<TestService> {
  const database = options.database ?? (await createTestDatabase('svc_rec', { fixture: options.fixture ?? RECORDS_FIXTURE }));
  const service = await startTestService({ fixture: RECORDS_FIXTURE, ...options, database, env: { RATE_LIMIT_RPS: '1000000', ...options.env } });
  if (options.database) return service;
  return { ...service, close: async () => { await service.close(); await database.drop(); } };
}

export const CREATE = 'mutation($model: String!, $data: JSON!) { create(model: $model, data: $data) }';
export const UPDATE = 'mutation($model: String!, $id: ID!, $data: JSON!) { update(model: $model, id: $id, data: $data) }';
export const RECORDS = `query($model: String!, $where: JSON, $orderBy: JSON, $limit: Int, $offset: Int, $include: [String!]) {
  records(model: $model, where: $where, orderBy: $orderBy, limit: $limit, offset: $offset, include: $include) }`;
export const RECORD = 'query($model: String!, $id: ID!, $include: [String!]) { record(model: $model, id: $id, include: $include) }';

/** Creates a record and returns it; fails the test on any error. */
export async function create(gql: Gql, model: string, data: Record<string, unknown>): Promise<any> {
  const r = await gql(CREATE, { model, data });
  if (!r.data?.create) throw new Error(`create ${model} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return r.data.create;
}
