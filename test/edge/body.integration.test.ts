/** The HTTP edge of app.ts: body limit (413), malformed JSON (400), unknown routes (404), all JSON {error}. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'node:http';
import type { TestService } from '../helpers/service.ts';
import { call, startOwnService } from '../auth/helpers.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await startOwnService({ env: { SVC_MAX_BODY_BYTES: '1024' } });
  svc.ctx.router.get('/edge-test/sql-error', async () => {
    await svc.ctx.db.none('select * from svc_no_such_table where password = $1', ['hunter2']);
  });
});
afterAll(async () => {
  await svc?.close();
});

/** A raw request, optionally chunked (no Content-Length), to test what fetch would hide. */
function raw(path: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const url = new URL(path, svc.url);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    if (headers['transfer-encoding'] === 'chunked') {
      for (let i = 0; i < body.length; i += 256) req.write(body.slice(i, i + 256));
    } else req.write(body);
    req.end();
  });
}

describe('request bodies and unknown routes', () => {
  it('answers 413 {error} above SVC_MAX_BODY_BYTES (with and without Content-Length)', async () => {
    const big = JSON.stringify({ email: 'a@example.com', password: 'x'.repeat(2000) });
    const declared = await call(svc.url, 'POST', '/auth/login', { body: JSON.parse(big) });
    expect(declared.status).toBe(413);
    expect(declared.body).toEqual({ error: expect.any(String), code: expect.any(String) });
    const chunked = await raw('/auth/login', big, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    expect(chunked.status).toBe(413);
    expect(chunked.body).toEqual({ error: expect.any(String), code: expect.any(String) });
  });

  it('accepts a body just under the limit', async () => {
    const reply = await call(svc.url, 'POST', '/auth/login', { body: { email: 'a@example.com', password: 'x'.repeat(900) } });
    expect(reply.status).toBe(401);
  });

  it('answers 400 {error} for malformed JSON, never 500', async () => {
    for (const text of ['{"email": ', 'not json', '{"a":1}}']) {
      const reply = await raw('/auth/login', text, { 'content-type': 'application/json' });
      expect(reply.status).toBe(400);
      expect(reply.body).toEqual({ error: expect.any(String), code: expect.any(String) });
    }
  });

  it('answers 400 when the body is not JSON at all', async () => {
    const reply = await raw('/auth/login', 'email=a@example.com', { 'content-type': 'application/x-www-form-urlencoded' });
    expect(reply.status).toBe(400);
    expect(reply.body).toMatchObject({ error: expect.any(String) });
  });

  it('answers 404 JSON for unknown routes', async () => {
    for (const [method, path] of [['GET', '/nope'], ['POST', '/auth/nope'], ['DELETE', '/nope/']]) {
      const reply = await call(svc.url, method, path);
      expect(reply.status).toBe(404);
      expect(reply.body).toEqual({ error: expect.any(String), code: expect.any(String) });
      expect(reply.headers.get('content-type')).toMatch(/application\/json/);
    }
  });

  it('answers 500 {error:"internal error"} for an unexpected failure, without SQL text', async () => {
    const reply = await call(svc.url, 'GET', '/edge-test/sql-error');
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual({ error: 'internal error', code: 'INTERNAL_ERROR' });
  });
});
