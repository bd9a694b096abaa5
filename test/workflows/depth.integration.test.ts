/**
 * Deeply nested JSON (item 8 of issue 26): one bound, MAX_JSON_DEPTH of
 * runtime/http/input.ts, for every surface that stores a client's free-form
 * JSON. A value nested deeper is a 400 VALIDATION_ERROR naming the field,
 * never a 500, on the workflow route, the action route, POST /jobs and
 * GraphQL's JSON arguments.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../runtime/http/input.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { gql } from './helpers.ts';

const GUARDED = `${import.meta.dirname}/fixtures/guarded/schema.ts`;

let service: TestService;
let manager: string;
let admin: string;

beforeAll(async () => {
  service = await startTestService({ fixture: GUARDED, env: { RATE_LIMIT_RPS: '100000' } });
  manager = await service.token({ role: 'Manager', userId: 'mgr' });
  admin = await service.token({ role: 'Admin', userId: 'root' });
});
afterAll(async () => {
  await service?.close();
});

/** JSON text of `levels` arrays inside each other around `leaf` (written as text: JSON.stringify would overflow the stack). */
const arrays = (levels: number, leaf = '1') => `${'['.repeat(levels)}${leaf}${']'.repeat(levels)}`;

/** JSON text of `levels` objects inside each other (`{"a": {"a": ...}}`). */
const objects = (levels: number, leaf = '1') => `${'{"a":'.repeat(levels)}${leaf}${'}'.repeat(levels)}`;

/** POSTs a JSON body given as text. */
async function post(path: string, token: string, text: string): Promise<{ status: number; body: any }> {
  const response = await fetch(service.url + path, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: text,
  });
  return { status: response.status, body: await response.json() };
}

const TOO_DEEP = new RegExp(`nested deeper than ${MAX_JSON_DEPTH} levels`);

describe('POST /workflows/{name}/run', () => {
  it('answers 400 naming the field for an input nested 5,000 deep (arrays or objects)', async () => {
    for (const deep of [arrays(5000), objects(5000)]) {
      const reply = await post('/workflows/intake/run', manager, `{"input": {"deep": ${deep}}}`);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'input.deep', error: expect.stringMatching(TOO_DEEP) });
    }
  });

  it('answers 400 at one level past the bound and starts the run at the bound', async () => {
    // The input is level 1: `deep`'s arrays are levels 2 and on.
    const over = await post('/workflows/intake/run', manager, `{"input": {"deep": ${arrays(MAX_JSON_DEPTH)}}}`);
    expect(over.status).toBe(400);
    const at = await post('/workflows/intake/run', manager, `{"input": {"deep": ${arrays(MAX_JSON_DEPTH - 1)}}}`);
    expect(at.status).toBe(202);
  });
});

describe('the other surfaces that take free-form JSON', () => {
  it('POST /api/actions/{name}: 400 naming the input field', async () => {
    const reply = await post('/api/actions/note', manager, `{"input": {"text": "x", "tags": ${arrays(5000, '"a"')}}}`);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'input.tags', error: expect.stringMatching(TOO_DEEP) });
  });

  it('POST /jobs: 400 naming the payload', async () => {
    const reply = await post('/jobs', admin, `{"queue": "work", "kind": "k", "payload": ${objects(5000)}}`);
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ code: 'VALIDATION_ERROR', field: 'payload.a', error: expect.stringMatching(TOO_DEEP) });
  });

  it('GraphQL JSON arguments, as variables and as inline literals: a VALIDATION_ERROR naming the argument', async () => {
    const enqueue = 'mutation($p: JSON) { enqueueJob(queue: "work", kind: "k", payload: $p) { id } }';
    const variables = await post('/graphql', admin, `{"query": ${JSON.stringify(enqueue)}, "variables": {"p": ${arrays(5000)}}}`);
    expect(variables.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', field: 'payload.0' });
    expect(variables.body.errors[0].message).toMatch(TOO_DEEP);
    // As deep as graphql-js' parser reads (thousands of levels overflow its stack: a parse error).
    const literal = `mutation { enqueueJob(queue: "work", kind: "k", payload: ${arrays(500)}) { id } }`;
    const inline = await post('/graphql', admin, JSON.stringify({ query: literal }));
    expect(inline.body.errors?.[0]?.extensions).toMatchObject({ code: 'VALIDATION_ERROR', field: 'payload.0' });
    // Below the bound the same calls succeed.
    const fine = await gql(service.url, admin, enqueue, { p: JSON.parse(arrays(10)) });
    expect(fine.enqueueJob.id).toEqual(expect.any(String));
  });
});
