/**
 * GraphQL over HTTP as the draft and CONTRACT section 15 have it: GET runs
 * queries (a mutation is 405), Accept negotiation between application/json and
 * application/graphql-response+json, the IDE only for browsers, a GraphQL-shaped
 * 401, and every invalid field of a write reported at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { clientFor, CREATE, create, startRecordsService, UPDATE, type Gql } from '../records/helpers.ts';

let service: TestService;
let token: string;
let gql: Gql;

beforeAll(async () => {
  service = await startRecordsService();
  token = await service.token({ role: 'Manager' });
  gql = await clientFor(service, { role: 'Manager' });
  await create(gql, 'Company', { name: 'Over Get' });
});
afterAll(() => service?.close());

const RESPONSE_TYPE = 'application/graphql-response+json';
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

function get(params: Record<string, string>, headers: Record<string, string> = {}) {
  const search = new URLSearchParams(params).toString();
  return fetch(`${service.url}/graphql${search ? `?${search}` : ''}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
}

describe('GET /graphql', () => {
  it('runs a query with variables and operationName', async () => {
    const response = await get({
      query: 'query A($m: String!) { records(model: $m) } query B { __typename }',
      variables: JSON.stringify({ m: 'Company' }),
      operationName: 'A',
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await response.json()) as any;
    expect(body.data.records.map((r: any) => r.name)).toEqual(['Over Get']);
  });

  it('refuses a mutation with 405 and Allow: POST, and runs nothing', async () => {
    const mutation = 'mutation { create(model: "Company", data: {name: "Never"}) }';
    const response = await get({ query: mutation });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(((await response.json()) as any).errors[0].extensions.code).toBe('VALIDATION_ERROR');
    // The operation chosen by operationName decides, not the first in the document.
    const mixed = await get({ query: `query Q { __typename } ${mutation.replace('mutation', 'mutation M')}`, operationName: 'M' });
    expect(mixed.status).toBe(405);
    expect((await gql('{ records(model: "Company", where: {name: "Never"}) }')).data.records).toEqual([]);
  });

  it('answers bad parameters with 400 in the GraphQL shape', async () => {
    const noQuery = await get({});
    expect(noQuery.status).toBe(400);
    expect(await noQuery.json()).toEqual({ errors: [{ message: 'query must be a non-empty string', extensions: { code: 'VALIDATION_ERROR', field: 'query' } }] });
    const badVariables = await get({ query: '{ __typename }', variables: '{not json' });
    expect(badVariables.status).toBe(400);
    expect(((await badVariables.json()) as any).errors[0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'variables' });
    const twice = await fetch(`${service.url}/graphql?query=a&query=b`, { headers: { authorization: `Bearer ${token}` } });
    expect(twice.status).toBe(400);
  });

  it('serves the IDE only to a browser asking without a query', async () => {
    const page = await fetch(`${service.url}/graphql`, { headers: { accept: BROWSER_ACCEPT } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('vary')).toContain('Accept');
    expect(await page.text()).toContain('graphiql.min.js');
    // A browser asking with a query gets the answer, as JSON.
    const withQuery = await fetch(`${service.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, {
      headers: { accept: BROWSER_ACCEPT, authorization: `Bearer ${token}` },
    });
    expect(withQuery.headers.get('content-type')).toContain('application/json');
    expect(await withQuery.json()).toEqual({ data: { __typename: 'Query' } });
    // A client without text/html first (curl's */*) gets GraphQL, not the page.
    const curl = await fetch(`${service.url}/graphql`, { headers: { accept: '*/*' } });
    expect(curl.headers.get('content-type')).toContain('application/json');
  });
});

describe('media types', () => {
  const post = (accept: string | null, body: unknown, extra: Record<string, string> = {}) => fetch(`${service.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...(accept === null ? {} : { accept }), ...extra },
    body: JSON.stringify(body),
  });

  it('answers application/graphql-response+json when the client prefers it, application/json otherwise', async () => {
    const query = { query: '{ __typename }' };
    const preferred = await post(`${RESPONSE_TYPE}, application/json;q=0.9`, query);
    expect(preferred.headers.get('content-type')).toBe(`${RESPONSE_TYPE}; charset=utf-8`);
    expect(await preferred.json()).toEqual({ data: { __typename: 'Query' } });
    for (const accept of [null, '*/*', 'application/json', `application/json, ${RESPONSE_TYPE}`]) {
      const response = await post(accept, query);
      expect(response.headers.get('content-type'), String(accept)).toBe('application/json; charset=utf-8');
    }
    const refused = await post('text/plain', query);
    expect(refused.status).toBe(406);
  });

  it('uses the draft status codes with application/graphql-response+json', async () => {
    const parse = await post(RESPONSE_TYPE, { query: '{ nope' });
    expect(parse.status).toBe(400);
    expect(((await parse.json()) as any).data).toBeUndefined();
    const invalid = await post(RESPONSE_TYPE, { query: '{ unknownField }' });
    expect(invalid.status).toBe(400);
    const coercion = await post(RESPONSE_TYPE, { query: 'query($l: Int) { records(model: "Company", limit: $l) }', variables: { l: 'x' } });
    expect(coercion.status).toBe(400);
    // Execution started: field errors beside data are 200.
    const field = await post(RESPONSE_TYPE, { query: '{ records(model: "Nope") }' });
    expect(field.status).toBe(200);
    expect(((await field.json()) as any).errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });

  it('refuses a body that is not JSON with 415', async () => {
    const response = await fetch(`${service.url}/graphql`, {
      method: 'POST', headers: { 'content-type': 'text/plain', authorization: `Bearer ${token}` }, body: '{"query":"{ __typename }"}',
    });
    expect(response.status).toBe(415);
    expect(((await response.json()) as any).errors[0].extensions.code).toBe('VALIDATION_ERROR');
  });
});

describe('authentication', () => {
  it('answers 401 in the GraphQL shape with WWW-Authenticate, for POST and GET and both media types', async () => {
    const expected = { errors: [{ message: 'authentication required', extensions: { code: 'UNAUTHORIZED' } }] };
    for (const accept of ['application/json', RESPONSE_TYPE]) {
      const response = await fetch(`${service.url}/graphql`, {
        method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(response.headers.get('content-type')).toContain(accept);
      expect(await response.json()).toEqual(expected);
    }
    const viaGet = await fetch(`${service.url}/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { authorization: 'Bearer not.a.token' } });
    expect(viaGet.status).toBe(401);
    expect(await viaGet.json()).toEqual({ errors: [{ message: 'invalid or expired token', extensions: { code: 'UNAUTHORIZED' } }] });
  });
});

describe('validation errors of a write', () => {
  it('reports every invalid field at once, one error each, the first as before', async () => {
    const r = await gql(CREATE, {
      model: 'Company',
      data: { name: 'x', email: 'not-an-email', employees: -1, nope: 1, address: { zip: 'abc' } },
    });
    expect(r.data).toBeNull();
    expect(r.errors!.map((e) => [e.extensions.code, e.extensions.field])).toEqual([
      ['VALIDATION_ERROR', 'name'],
      ['VALIDATION_ERROR', 'email'],
      ['VALIDATION_ERROR', 'employees'],
      ['VALIDATION_ERROR', 'nope'],
      ['VALIDATION_ERROR', 'address.zip'],
      ['VALIDATION_ERROR', 'address.city'],
    ]);
    expect(r.errors![0].message).toBe('name must be at least 2 characters');
    expect((r.errors![0] as any).path).toEqual(['create']);
    // A missing required field is reported beside the others.
    const missing = await gql(CREATE, { model: 'Company', data: { email: 'bad' } });
    expect(missing.errors!.map((e) => e.extensions.field)).toEqual(['email', 'name']);
    // One invalid field: one error, as always.
    const one = await gql(CREATE, { model: 'Company', data: { name: 'y' } });
    expect(one.errors).toEqual([{ message: 'name must be at least 2 characters', path: ['create'], locations: expect.any(Array), extensions: { code: 'VALIDATION_ERROR', field: 'name' } }]);
  });

  it('does the same for update', async () => {
    const company = await create(gql, 'Company', { name: 'To Update' });
    const r = await gql(UPDATE, { model: 'Company', id: company.id, data: { phone: '12a', tags: ['a', 'b', 'c', 'd'] } });
    expect(r.errors!.map((e) => e.extensions.field)).toEqual(['phone', 'tags']);
  });
});
