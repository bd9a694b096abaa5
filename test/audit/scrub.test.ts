/** `scrub`: secret keys at any depth become "[redacted]"; changes without one are passed on as they are, not copied. */
import { describe, expect, it } from 'vitest';
import { scrub } from '../../runtime/audit/log.ts';

const at = new Date('2026-01-02T03:04:05Z');

describe('scrub', () => {
  it.each([
    ['a flat secret', { name: 'a', password: 'p' }, { name: 'a', password: '[redacted]' }],
    ['any case', { Access_Token: 't', n: 1 }, { Access_Token: '[redacted]', n: 1 }],
    ['a nested secret', { user: { clientSecret: 's', ok: true } }, { user: { clientSecret: '[redacted]', ok: true } }],
    ['in an array', { list: [{ token: 'x' }, 2] }, { list: [{ token: '[redacted]' }, 2] }],
    ['an update pair', { refresh_token: ['a', 'b'], name: ['x', 'y'] }, { refresh_token: '[redacted]', name: ['x', 'y'] }],
    ['a date kept', { at, secret: 1 }, { at, secret: '[redacted]' }],
  ])('redacts %s', (_, input, expected) => {
    expect(scrub(input)).toEqual(expected);
  });

  it('returns changes without a secret key as they are', () => {
    const changes = { name: 'a', nested: { list: [1, { x: at }] }, passwords: 'not a secret key' };
    expect(scrub(changes)).toBe(changes);
  });

  it('never changes its input', () => {
    const input = { a: { token: 't' } };
    scrub(input);
    expect(input).toEqual({ a: { token: 't' } });
  });
});
