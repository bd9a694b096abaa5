/**
 * Routing as @koa/router answers it, now dispatched on the path's first
 * segment (runtime/http/app.ts): patterns case-insensitive, a trailing slash
 * allowed, 405 with Allow and a JSON body for a known path and another
 * method, 404 for an unknown first segment and for an unknown path under a
 * known one, parameters matched, the request id on every answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { startRecordsService } from '../records/helpers.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startRecordsService();
});
afterAll(() => svc?.close());

interface Case {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly code?: string;
  readonly allow?: string;
}

const CASES: readonly Case[] = [
  { method: 'GET', path: '/health', status: 200 },
  { method: 'GET', path: '/HEALTH', status: 200 },
  { method: 'GET', path: '/health/', status: 200 },
  { method: 'GET', path: '/health?x=1', status: 200 },
  { method: 'HEAD', path: '/health', status: 200 },
  { method: 'POST', path: '/health', status: 405, code: 'METHOD_NOT_ALLOWED', allow: 'HEAD, GET' },
  // `/jobs/:id` also matches `lease`.
  { method: 'DELETE', path: '/jobs/lease', status: 405, code: 'METHOD_NOT_ALLOWED', allow: 'HEAD, GET, POST' },
  { method: 'GET', path: '/Jobs/some-id', status: 401, code: 'UNAUTHORIZED' },
  { method: 'POST', path: '/jobs/some-id/heartbeat', status: 401, code: 'UNAUTHORIZED' },
  { method: 'GET', path: '/jobs/some-id/unknown', status: 404, code: 'NOT_FOUND' },
  { method: 'GET', path: '/nowhere', status: 404, code: 'NOT_FOUND' },
  // `/` outside production points at the IDE and the docs (issue 26 item 11); other methods are not allowed there.
  { method: 'GET', path: '/', status: 200 },
  { method: 'DELETE', path: '/', status: 405, code: 'METHOD_NOT_ALLOWED' },
  { method: 'GET', path: '/health.json', status: 404, code: 'NOT_FOUND' },
  { method: 'GET', path: '//health', status: 404, code: 'NOT_FOUND' },
  { method: 'GET', path: '/health%2F', status: 404, code: 'NOT_FOUND' },
  { method: 'POST', path: '/jobs%2Flease', status: 404, code: 'NOT_FOUND' },
  { method: 'GET', path: `/${'a'.repeat(4000)}/health`, status: 404, code: 'NOT_FOUND' },
  { method: 'GET', path: '/schema.ts', status: 200 },
  { method: 'GET', path: '/docs/assets/nothing-here.js', status: 404 },
  { method: 'PUT', path: '/graphql', status: 405, code: 'METHOD_NOT_ALLOWED', allow: 'POST, HEAD, GET' },
];

describe('routing', () => {
  it.each(CASES)('$method $path: $status', async ({ method, path, status, code, allow }) => {
    const response = await fetch(svc.url + path, { method });
    expect(response.status).toBe(status);
    expect(response.headers.get('x-request-id')).toMatch(/^[\w.-]+$/);
    if (allow) expect(response.headers.get('allow')?.split(/,\s*/).sort()).toEqual(allow.split(', ').sort());
    if (code) expect(((await response.json()) as { code: string }).code).toBe(code);
  });

  it('keeps the caller\'s request id, and replaces one it cannot log safely', async () => {
    const kept = await fetch(`${svc.url}/health`, { headers: { 'x-request-id': 'abc-123.x' } });
    expect(kept.headers.get('x-request-id')).toBe('abc-123.x');
    for (const unsafe of ['a b', 'x'.repeat(129), 'a"b']) {
      const replaced = await fetch(`${svc.url}/health`, { headers: { 'x-request-id': unsafe } });
      expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
