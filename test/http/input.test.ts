/** findNul: the first string or key holding U+0000, by path; null when none (the fast scan and the path walk agree). */
import { describe, expect, it } from 'vitest';
import { findNul } from '../../runtime/http/input.ts';

describe('findNul', () => {
  it.each([
    ['a string', 'a\u0000b', 'x', 'x'],
    ['a string at the root, no path', 'a\u0000', '', 'body'],
    ['a nested value', { a: { b: ['ok', 'n\u0000'] } }, '', 'a.b.1'],
    ['a key', { a: { 'k\u0000': 1 } }, 'data', 'data.a'],
    ['the first of two, in key order', { a: 'x\u0000', b: 'y\u0000' }, '', 'a'],
    ['inside an array of objects', [{ a: 1 }, { b: 'z\u0000' }], 'items', 'items.1.b'],
  ])('finds %s', (_, value, path, found) => {
    expect(findNul(value, path)).toBe(found);
  });

  it.each([
    ['a clean object', { a: 'b', c: [1, 'd', { e: null }], f: true }],
    ['a clean string', 'abc'],
    ['numbers, booleans and null', [1, false, null]],
    ['an escaped-looking text that is not U+0000', { a: '\\u0000' }],
  ])('finds nothing in %s', (_, value) => {
    expect(findNul(value, '')).toBeNull();
  });
});
