/**
 * One timestamp format in every response (CONTRACT section 15): ISO 8601, UTC,
 * milliseconds, `Z`. Responses of records, history, users, jobs, worker
 * tokens, audit, media and diagnostics are scanned for any string that looks
 * like a timestamp in another form. Also: written dates are answered in that
 * form, keyset cursors stay exact below the millisecond, and GET /meta/schema
 * needs an Admin token in production only.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { clientFor, create, startRecordsService, UPDATE, type Gql } from '../records/helpers.ts';

const ADMIN_EMAIL = 'time-admin@example.com';
const ADMIN_PASSWORD = 'time-password-123';
/** The one format. */
const ISO_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Anything that looks like a date with a time of day, in any form. */
const LOOKS_LIKE_TIMESTAMP = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/;

let service: TestService;
let admin: Gql;
let adminToken: string;

beforeAll(async () => {
  service = await startRecordsService({
    env: { ADMIN_EMAIL, ADMIN_PASSWORD, SVC_MEDIA_DIR: mkdtempSync(join(tmpdir(), 'svc-time-media-')) },
  });
  admin = await clientFor(service, { role: 'Manager', userId: 'time-manager' });
  adminToken = await service.token({ role: 'Admin', userId: 'time-admin' });
});
afterAll(() => service?.close());

/** Every string in `value` that looks like a timestamp, with its JSON path. */
function timestampsIn(value: unknown, path = '$', found: Array<{ path: string; text: string }> = []) {
  if (typeof value === 'string') {
    if (LOOKS_LIKE_TIMESTAMP.test(value)) found.push({ path, text: value });
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => timestampsIn(item, `${path}[${i}]`, found));
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) timestampsIn(item, `${path}.${key}`, found);
  }
  return found;
}

async function rest(method: string, path: string, body?: unknown, token = adminToken, extra: Record<string, string> = {}): Promise<any> {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...extra },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  expect(response.status, `${method} ${path}`).toBeLessThan(300);
  return response.json();
}

describe('every response', () => {
  it('carries timestamps only as ISO 8601 UTC with milliseconds', async () => {
    const responses = new Map<string, unknown>();
    const company = await create(admin, 'Company', { name: 'Timely', foundedAt: '2024-05-01T10:00:00.123456+02:00' });
    responses.set('graphql create', company);
    responses.set('graphql update', (await admin(UPDATE, { model: 'Company', id: company.id, data: { foundedAt: '2024-06-01' } })).body);
    responses.set('graphql records', (await admin('{ records(model: "Company") }')).body);
    responses.set('graphql paginatedRecords', (await admin('{ paginatedRecords(model: "Company", first: 5) { items } }')).body);
    responses.set('graphql recordHistory', (await admin(`{ recordHistory(model: "Company", id: "${company.id}") { data occurredAt } }`)).body);
    await admin('mutation($id: ID!) { delete(model: "Company", id: $id) }', { id: company.id });
    responses.set('graphql deletedRecords', (await admin('{ deletedRecords(model: "Company") }')).body);

    const login = await fetch(`${service.url}/auth/login`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    });
    responses.set('POST /auth/login', await login.json());
    responses.set('POST /auth/users', await rest('POST', '/auth/users', { email: 'someone@example.com', password: 'someone-pass-1', role: 'Viewer' }));
    responses.set('GET /auth/users', await rest('GET', '/auth/users'));
    const job = await rest('POST', '/jobs', { queue: 'time', kind: 'tick', payload: {} });
    responses.set('GET /jobs/{id}', await rest('GET', `/jobs/${job.id}`));
    responses.set('GET /jobs/recent', await rest('GET', '/jobs/recent?limit=5'));
    responses.set('POST /jobs/workers', await rest('POST', '/jobs/workers', { name: 'time-worker', queues: ['time'] }));
    responses.set('GET /jobs/workers', await rest('GET', '/jobs/workers'));
    const form = new FormData();
    form.append('file', new Blob(['hello'], { type: 'text/plain' }), 'hello.txt');
    const media = await fetch(`${service.url}/media`, { method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: form });
    expect(media.status).toBe(201);
    const uploaded = (await media.json()) as { id: string };
    responses.set('POST /media', uploaded);
    responses.set('GET /media/{id}/metadata', await rest('GET', `/media/${uploaded.id}/metadata`));
    responses.set('POST /media/presign', await rest('POST', '/media/presign', { filename: 'a.txt', contentType: 'text/plain', size: 3 }));
    responses.set('GET /audit/logs', await rest('GET', '/audit/logs?limit=200'));
    responses.set('GET /audit/statistics', await rest('GET', '/audit/statistics'));
    responses.set('GET /storage/diagnostics', await rest('GET', '/storage/diagnostics'));

    const wrong: string[] = [];
    const counts: Record<string, number> = {};
    for (const [route, body] of responses) {
      const found = timestampsIn(body);
      counts[route] = found.length;
      for (const { path, text } of found) if (!ISO_UTC_MS.test(text)) wrong.push(`${route} ${path}: ${text}`);
    }
    expect(wrong).toEqual([]);
    // The scan saw timestamps where each route has some: it is not vacuous.
    for (const route of responses.keys()) {
      if (['POST /auth/login', 'GET /jobs/{id}', 'POST /jobs/workers'].includes(route)) continue; // bodies without a timestamp
      expect(counts[route], route).toBeGreaterThan(0);
    }
    // A written date is answered, recorded in history and audited in the same form.
    expect(company.foundedAt).toBe('2024-05-01T08:00:00.123Z');
    const history = responses.get('graphql recordHistory') as any;
    expect(history.data.recordHistory[0].data.foundedAt).toBe('2024-05-01T08:00:00.123Z');
    expect(history.data.recordHistory[1].data.foundedAt).toBe('2024-06-01T00:00:00.000Z');
  });
});

describe('keyset cursors', () => {
  it('stay exact when rows differ below the millisecond', async () => {
    const ids: string[] = [];
    for (const name of ['Micro A', 'Micro B', 'Micro C']) ids.push((await create(admin, 'Company', { name })).id);
    // Same millisecond, different microseconds, in the reverse order of the ids.
    await service.ctx.db.none(
      `update company set created_at = '2030-01-01T00:00:00.000900Z'::timestamptz - (array_position($1::text[], id) * interval '1 microsecond' * 100)
        where id = any($1)`, [ids],
    );
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const result: any = await admin(`query($after: String) { paginatedRecords(model: "Company", first: 1, after: $after, where: {name: {startsWith: "Micro"}}, orderBy: {createdAt: ASC}) { items pageInfo { hasNextPage endCursor } } }`, { after });
      const { items, pageInfo } = result.data.paginatedRecords;
      seen.push(...items.map((item: any) => item.id));
      expect(items.every((item: any) => item.createdAt === '2030-01-01T00:00:00.000Z')).toBe(true);
      expect(Object.keys(items[0]).some((key) => key.startsWith('__'))).toBe(false);
      if (!pageInfo.hasNextPage) break;
      after = pageInfo.endCursor;
    }
    expect(seen).toEqual([...ids].reverse());
  });
});

describe('GET /meta/schema', () => {
  it('is open in development', async () => {
    const response = await fetch(`${service.url}/meta/schema`);
    expect(response.status).toBe(200);
  });

  it('needs an Admin token in production', async () => {
    const production = await startTestService({ env: { SVC_ENV: 'production' } });
    try {
      expect((await fetch(`${production.url}/meta/schema`)).status).toBe(401);
      const manager = await production.token({ role: 'Manager' });
      expect((await fetch(`${production.url}/meta/schema`, { headers: { authorization: `Bearer ${manager}` } })).status).toBe(403);
      const adminOfProduction = await production.token({ role: 'Admin' });
      const allowed = await fetch(`${production.url}/meta/schema`, { headers: { authorization: `Bearer ${adminOfProduction}` } });
      expect(allowed.status).toBe(200);
      expect(((await allowed.json()) as { kind: string }).kind).toBe('schema');
    } finally {
      await production.close();
    }
  });
});

it('finds a written date by the value it answered', async () => {
  const company = await create(admin, 'Company', { name: 'Round Trip', foundedAt: '2024-01-02T05:04:05.678+02:00' });
  expect(company.foundedAt).toBe('2024-01-02T03:04:05.678Z');
  const found = await admin('{ records(model: "Company", where: {foundedAt: {eq: "2024-01-02T03:04:05.678Z"}}) }');
  expect(found.data.records.map((r: any) => r.id)).toEqual([company.id]);
});
