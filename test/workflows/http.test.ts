/**
 * The pieces that keep an http step from stalling the engine, without a
 * server: a step's throw is its failure (a busy database is not), headers
 * are checked before anything is sent, and an origin's slots are bounded.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { attempt } from '../../runtime/workflows/engine.ts';
import { OriginSlots, prepare, type HttpCall } from '../../runtime/workflows/http.ts';

const ALLOW = ['http://127.0.0.1:8080'];
const call = (headers: Record<string, unknown>): HttpCall => ({
  method: 'POST', url: 'http://127.0.0.1:8080/hook', headers, body: { a: 1 }, timeoutSecs: 10, idempotencyKey: 'run:step',
});
const deps = { log: pino({ level: 'silent' }) };

describe('attempt', () => {
  it('turns whatever a step throws into its failure, with the error message', async () => {
    const outcome = await attempt(deps, { id: 'r' }, { id: 's' }, 2, async () => {
      throw new TypeError('Headers.set: "a\nb" is an invalid header value.');
    });
    expect(outcome).toEqual({ kind: 'failed', attempts: 2, error: 'Headers.set: "a\nb" is an invalid header value.' });
    expect(await attempt(deps, { id: 'r' }, { id: 's' }, 1, async () => { throw 'plain'; })).toEqual({ kind: 'failed', attempts: 1, error: 'plain' });
  });

  it('rethrows a database that cannot serve now (the advance is retried, the step is not failed)', async () => {
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    await expect(attempt(deps, { id: 'r' }, { id: 's' }, 1, async () => { throw deadlock; })).rejects.toBe(deadlock);
    const constraint = Object.assign(new Error('value too long'), { code: '22001' });
    expect(await attempt(deps, { id: 'r' }, { id: 's' }, 1, async () => { throw constraint; })).toMatchObject({ kind: 'failed', error: 'value too long' });
  });
});

describe('prepare', () => {
  it('refuses a header value with a line break or NUL, and a name that is not a token, naming the header', () => {
    expect(prepare(call({ 'X-Title': 'line1\nline2' }), ALLOW)).toEqual({ ok: false, error: 'header X-Title contains a line break: not sent' });
    expect(prepare(call({ 'X-Title': 'a\rb' }), ALLOW)).toEqual({ ok: false, error: 'header X-Title contains a line break: not sent' });
    expect(prepare(call({ 'X-Title': 'a\0b' }), ALLOW)).toEqual({ ok: false, error: 'header X-Title contains a NUL character: not sent' });
    expect(prepare(call({ 'X Title': 'a' }), ALLOW)).toEqual({ ok: false, error: 'header name "X Title" is not a valid HTTP header name: not sent' });
  });

  it('serialises headers and body once, with the idempotency key and the origin', () => {
    const prepared = prepare(call({ 'X-Count': 3, 'X-Skip': null }), ALLOW);
    if (!prepared.ok) throw new Error(prepared.error);
    expect(prepared.request.origin).toBe('http://127.0.0.1:8080');
    expect(Object.fromEntries(prepared.request.headers)).toEqual({ 'x-count': '3', 'idempotency-key': 'run:step', 'content-type': 'application/json' });
    expect(prepared.request.body).toBe('{"a":1}');
  });
});

describe('OriginSlots', () => {
  it('gives at most perOrigin slots per origin; a freed slot (freed once) can be taken again', () => {
    const slots = new OriginSlots(2);
    const a = slots.take('http://a');
    const b = slots.take('http://a');
    expect([a, b].every(Boolean)).toBe(true);
    expect(slots.take('http://a')).toBeNull();
    expect(slots.take('http://b')).not.toBeNull();
    a!();
    a!();
    expect(slots.take('http://a')).not.toBeNull();
    expect(slots.take('http://a')).toBeNull();
  });
});
