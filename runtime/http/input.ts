/**
 * Client input that no store can hold: Postgres text and jsonb cannot contain
 * U+0000, so a NUL anywhere in a string is the client's mistake, answered as
 * a VALIDATION_ERROR naming where it was, before any statement runs.
 */
import { invalidField } from './errors.ts';

/** The path of the first string (or key) holding U+0000 in `value`, or null. Iterative: depth cannot overflow the stack. */
export function findNul(value: unknown, path: string): string | null {
  const stack: Array<[unknown, string]> = [[value, path]];
  while (stack.length > 0) {
    const [item, at] = stack.pop()!;
    if (typeof item === 'string') {
      if (item.includes('\u0000')) return at || 'body';
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    const entries = Array.isArray(item) ? item.map((v, i) => [String(i), v] as const) : Object.entries(item);
    for (let k = entries.length - 1; k >= 0; k--) {
      const [key, child] = entries[k];
      if (key.includes('\u0000')) return at || 'body';
      stack.push([child, join(at, key)]);
    }
  }
  return null;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** Throws a 400 VALIDATION_ERROR naming the first field holding U+0000. */
export function rejectNul(value: unknown, path = ''): void {
  const field = findNul(value, path);
  if (field !== null) throw invalidField(field, `${field} must not contain NUL characters (U+0000)`);
}
