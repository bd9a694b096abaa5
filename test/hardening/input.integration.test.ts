/**
 * No 500 from client input (issue 10, point 5): NUL characters, impossible
 * dates, absurdly deep `where`, `__proto__` keys. Each is a 400 or a
 * VALIDATION_ERROR naming the field, and the server's log holds no SQL text
 * and no bound value of a failed statement.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../runtime/log/index.ts';
import type { TestService } from '../helpers/service.ts';
import { call } from '../auth/helpers.ts';
import { clientFor, create, RECORDS, startRecordsService, type Gql } from '../records/helpers.ts';

let service: TestService;
let admin: Gql;
const lines: string[] = [];

beforeAll(async () => {
  const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
  service = await startRecordsService({ log: createLogger('warn', 'test', sink) });
  service.ctx.router.get('/hardening/sql-error', async () => {
    await service.ctx.db.any({ name: 'hardening_probe', text: 'select $1::int', values: ['secret-value-42'] });
  });
  admin = await clientFor(service, { role: 'Admin' });
});
afterAll(() => service?.close());

describe('NUL characters (U+0000)', () => {
  it('login: 400 VALIDATION_ERROR naming email, anonymously', async () => {
    const reply = await call(service.url, 'POST', '/auth/login', { body: { email: 'a\u0000@example.com', password: 'x' } });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'email' });
  });

  it('a REST path parameter or query value: 400 VALIDATION_ERROR naming it, on every route, before any statement runs', async () => {
    const token = await service.token({ role: 'Admin' });
    const headers = { authorization: `Bearer ${token}` };
    const cases: Array<[string, string]> = [
      ['/jobs/a%00b', 'path'], ['/media/a%00b/metadata', 'path'], ['/audit/entity/Company/a%00b/audit', 'path'],
      ['/public/records/Co%00mpany', 'path'], ['/audit/logs?actorId=a%00b', 'actorId'], ['/jobs/recent?queue=%00', 'queue'],
    ];
    for (const [path, field] of cases) {
      const reply = await call(service.url, 'GET', path, { headers });
      expect([path, reply.status, reply.body]).toEqual([path, 400, expect.objectContaining({ code: 'VALIDATION_ERROR', field })]);
    }
    // Anonymous too, and the server still answers.
    expect((await call(service.url, 'GET', '/jobs/a%00b')).status).toBe(400);
    expect((await fetch(`${service.url}/health`)).status).toBe(200);
  });

  it('GraphQL variables: 400 VALIDATION_ERROR naming the variable path', async () => {
    const r = await admin('mutation($d: JSON!) { create(model: "Company", data: $d) }', { d: { name: 'Ab\u0000c' } });
    expect(r.status).toBe(400);
    expect(r.errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'variables.d.name' });
  });

  it('GraphQL literals in data and where: VALIDATION_ERROR naming the field', async () => {
    const data = await admin('mutation { create(model: "Company", data: {name: "Ab\\u0000c"}) }');
    expect(data.errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'name' });
    const where = await admin('{ records(model: "Company", where: {name: {startsWith: "\\u0000"}}) }');
    expect(where.errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'where.name.startsWith' });
    const job = await admin('mutation { enqueueJob(queue: "q", kind: "k", payload: {note: "x\\u0000"}) { id } }');
    expect(job.errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'payload.note' });
    const id = await admin('{ record(model: "Company", id: "a\\u0000") }');
    expect(id.errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'id' });
  });
});

describe('where', () => {
  it('an impossible date is a VALIDATION_ERROR naming the field, in where and in data', async () => {
    for (const value of ['2024-02-30', '2023-02-29T10:00:00Z', '2024-13-01', '2024-01-01T25:00:00Z', '0000-01-01']) {
      const r = await admin(RECORDS, { model: 'Company', where: { foundedAt: { gt: value } } });
      expect(r.errors?.[0].extensions, value).toEqual({ code: 'VALIDATION_ERROR', field: 'where.foundedAt.gt' });
    }
    const written = await admin('mutation($d: JSON!) { create(model: "Company", data: $d) }', { d: { name: 'Dated', foundedAt: '2024-02-30' } });
    expect(written.errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'foundedAt' });
    const leap = await create(admin, 'Company', { name: 'Leap', foundedAt: '2024-02-29' });
    expect(leap.foundedAt).toMatch(/^2024-02-29/);
  });

  it('a 5,000-deep where is a VALIDATION_ERROR (depth limit), not INTERNAL_ERROR', async () => {
    // Written by hand: JSON.stringify itself would overflow the test's stack.
    const where = '{"AND":['.repeat(5000) + '{"name":"x"}' + ']}'.repeat(5000);
    const body = `{"query":${JSON.stringify(RECORDS)},"variables":{"model":"Company","where":${where}}}`;
    const response = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await service.token({ role: 'Admin' })}` },
      body,
    });
    const json = (await response.json()) as any;
    expect(json.errors[0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'where' });
    expect(json.errors[0].message).toMatch(/deeper than/);
  });

  it('a where with too many conditions is a VALIDATION_ERROR', async () => {
    const where = { OR: Array.from({ length: 2000 }, (_, i) => ({ name: `n${i}` })) };
    const r = await admin(RECORDS, { model: 'Company', where });
    expect(r.errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'where' });
  });
});

describe('__proto__ keys', () => {
  // Spelled literally, or with \u escapes (JSON.parse makes the same own key of either).
  it.each([
    ['literally', '"__proto__"', 'Proto'],
    ['with \\u escapes', '"\\u005f_pro\\u0074o__"', 'Escaped'],
  ])('are accepted and dropped when spelled %s: answered as if absent, nothing is polluted', async (_, key, name) => {
    const body = `{"email":"nobody@example.com","password":"wrong-password",${key}:{"polluted":true}}`;
    expect(Object.hasOwn(JSON.parse(body), '__proto__')).toBe(true);
    const response = await fetch(`${service.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(response.status).toBe(401);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const gql = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await service.token({ role: 'Admin' })}` },
      body: `{"query":"mutation($d: JSON!) { create(model: \\"Company\\", data: $d) }","variables":{"d":{"name":"${name}",${key}:{"name":"x"}}}}`,
    });
    const json = (await gql.json()) as any;
    expect(json.data.create.name).toBe(name);
  });
});

describe('database errors in the log', () => {
  it('carry the statement name, SQLSTATE and request id, never the SQL text or a bound value', async () => {
    lines.length = 0;
    const reply = await call(service.url, 'GET', '/hardening/sql-error', { headers: { 'x-request-id': 'req-hardening-1' } });
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual({ error: 'internal error', code: 'INTERNAL_ERROR' });
    const logged = lines.join('');
    expect(logged).toContain('"sqlstate":"22P02"');
    expect(logged).toContain('"statement":"hardening_probe"');
    expect(logged).toContain('req-hardening-1');
    expect(logged).not.toContain('secret-value-42');
    expect(logged).not.toContain('select $1');
  });
});
