/** isJsonRequest answers as Koa's request.is('json', '+json') does, for the headers it matches directly and the rest. */
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { isJsonRequest } from '../../runtime/http/body.ts';

function context(headers: Record<string, string>): Koa.Context {
  const req = { headers, url: '/', method: 'POST', socket: {} };
  return new Koa().createContext(req as never, { getHeader: () => undefined, setHeader: () => undefined } as never);
}

describe('isJsonRequest', () => {
  it.each([
    [{ 'content-type': 'application/json', 'content-length': '2' }],
    [{ 'content-type': 'application/json; charset=utf-8', 'transfer-encoding': 'chunked' }],
    [{ 'content-type': 'application/json;charset=utf-8', 'content-length': '0' }],
    [{ 'content-type': 'Application/JSON', 'content-length': '2' }],
    [{ 'content-type': 'application/vnd.api+json', 'content-length': '2' }],
    [{ 'content-type': 'text/plain', 'content-length': '2' }],
    [{ 'content-type': 'application/json' }],
    [{ 'content-type': 'application/json', 'content-length': 'x' }],
    [{ 'content-length': '2' }],
  ])('agrees with request.is for %j', (headers) => {
    const ctx = context(headers);
    expect(isJsonRequest(ctx)).toBe(Boolean(ctx.request.is('json', '+json')));
  });
});
