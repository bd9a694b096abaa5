/**
 * Client input that no store can hold: Postgres text and jsonb cannot contain
 * U+0000, so a NUL anywhere in a string is the client's mistake, answered as
 * a VALIDATION_ERROR naming where it was, before any statement runs. So is
 * free-form JSON nested deeper than MAX_JSON_DEPTH: JSON.stringify, jsonb and
 * every recursive reader after the parser would overflow their stacks on it.
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

/**
 * How deep arrays and objects may nest in a client's free-form JSON (a
 * workflow's input, an action's input, a job's payload): the value itself is
 * level 1. One bound for every surface that stores such a value.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The entry of `value` (at `path`) under which arrays and objects nest deeper
 * than MAX_JSON_DEPTH, or null. Iterative: the depth it measures cannot overflow the stack.
 */
export function findTooDeep(value: unknown, path: string): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, child] of entries) if (nestsDeeperThan(child, MAX_JSON_DEPTH - 1)) return join(path, key);
  return null;
}

/** Do arrays and objects nest more than `levels` deep in `value` (an object or array is one level)? */
function nestsDeeperThan(value: unknown, levels: number): boolean {
  const nodes: unknown[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop();
    const depth = depths.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth > levels) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child !== 'object' || child === null) continue;
      nodes.push(child);
      depths.push(depth + 1);
    }
  }
  return false;
}

/** Throws a 400 VALIDATION_ERROR naming the entry of `value` that nests deeper than MAX_JSON_DEPTH. */
export function rejectTooDeep(value: unknown, path: string): void {
  const field = findTooDeep(value, path);
  if (field !== null) throw invalidField(field, `${field} is nested deeper than ${MAX_JSON_DEPTH} levels`);
}
