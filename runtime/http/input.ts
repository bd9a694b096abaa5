/**
 * Client input that no store can hold: Postgres text and jsonb cannot contain
 * U+0000, so a NUL anywhere in a string is the client's mistake, answered as
 * a VALIDATION_ERROR naming where it was, before any statement runs.
 */
import { invalidField } from './errors.ts';

/** The path of the first string (or key) holding U+0000 in `value`, or null. Iterative: depth cannot overflow the stack. */
export function findNul(value: unknown, path: string): string | null {
  return holdsNul(value) ? pathOfNul(value, path) : null;
}

/** Does any string or key in `value` hold U+0000? The common answer, no, without building a path per value. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (typeof value !== 'object' || value === null) return false;
  const stack: object[] = [value];
  while (stack.length > 0) {
    const node = stack.pop()! as Record<string, unknown>;
    const array = Array.isArray(node);
    for (const key of array ? [] : Object.keys(node)) if (key.includes('\u0000')) return true;
    for (const child of array ? node as unknown[] : Object.values(node)) {
      if (typeof child === 'string') {
        if (child.includes('\u0000')) return true;
      } else if (typeof child === 'object' && child !== null) {
        stack.push(child);
      }
    }
  }
  return false;
}

/** Where the first U+0000 is (the order findNul has always reported). */
function pathOfNul(value: unknown, path: string): string | null {
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
