/**
 * Templates and conditions at run time (CONTRACT section 12). The generator
 * has checked every path at build; here a path that leads nowhere (a field
 * the record does not hold, a step output without that key) renders as null.
 * A template that is the whole string keeps its value's type; inside a longer
 * string a value is written as text (objects as JSON, null as nothing).
 */
import { scanTemplates } from '../ir/template.ts';
import type { StepCondition, TemplateValue } from '../ir/types.ts';

/** What templates read: `trigger`, `steps` (outputs by step id) and `vars`. */
export interface RenderScope {
  readonly trigger: unknown;
  readonly steps: Readonly<Record<string, unknown>>;
  readonly vars: Readonly<Record<string, unknown>>;
}

export class TemplateError extends Error {}

export function render(value: TemplateValue, scope: RenderScope): unknown {
  if (typeof value === 'string') return renderString(value, scope);
  if (Array.isArray(value)) return value.map((item) => render(item, scope));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, render(item as TemplateValue, scope)]));
  }
  return value;
}

function renderString(text: string, scope: RenderScope): unknown {
  const scan = scanTemplates(text);
  if (!scan.ok) throw new TemplateError(scan.problem);
  if (scan.refs.length === 0) return text;
  if (scan.whole) return lookup(scan.refs[0].path, scope);
  // Rebuilt left to right, so a rendered value is never scanned again.
  let out = '';
  let from = 0;
  for (const ref of scan.refs) {
    const at = text.indexOf(ref.text, from);
    out += text.slice(from, at) + asText(lookup(ref.path, scope));
    from = at + ref.text.length;
  }
  return out + text.slice(from);
}

function lookup(path: readonly string[], scope: RenderScope): unknown {
  let current: unknown = scope;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return null;
    // Own properties only: a path never reaches a prototype (`constructor`, `__proto__`).
    if (!Object.hasOwn(current, segment)) return null;
    current = (current as Record<string, unknown>)[segment];
  }
  return current === undefined ? null : current;
}

function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

type Operator = StepCondition['op'];

const ORDERED = (a: unknown, b: unknown, test: (order: number) => boolean): boolean => {
  if (typeof a === 'number' && typeof b === 'number') return test(a - b);
  if (typeof a === 'string' && typeof b === 'string') return test(a < b ? -1 : a > b ? 1 : 0);
  return false; // values of different types (or null) are not ordered: the condition is false
};

/** Every operator of the IR; an operator outside it is a TypeError at build and an error here, never true. */
const OPERATORS: Record<Operator, (args: readonly unknown[]) => boolean> = {
  eq: ([a, b]) => same(a, b),
  ne: ([a, b]) => !same(a, b),
  gt: ([a, b]) => ORDERED(a, b, (o) => o > 0),
  gte: ([a, b]) => ORDERED(a, b, (o) => o >= 0),
  lt: ([a, b]) => ORDERED(a, b, (o) => o < 0),
  lte: ([a, b]) => ORDERED(a, b, (o) => o <= 0),
  in: ([a, list]) => Array.isArray(list) && list.some((item) => same(a, item)),
  contains: ([haystack, needle]) => (typeof haystack === 'string' && typeof needle === 'string'
    ? haystack.includes(needle)
    : Array.isArray(haystack) && haystack.some((item) => same(item, needle))),
  exists: ([a]) => a !== null && a !== undefined,
};

export function evaluate(condition: StepCondition, scope: RenderScope): boolean {
  const operator = Object.hasOwn(OPERATORS, condition.op) ? OPERATORS[condition.op] : undefined;
  if (!operator) throw new TemplateError(`unknown condition operator ${String(condition.op)}`);
  return operator(condition.args.map((arg) => render(arg, scope)));
}

/** Deep equality of JSON values (key order does not matter). */
export function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return (a ?? null) === (b ?? null);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((item, i) => same(item, (b as unknown[])[i]));
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((key) => Object.hasOwn(b, key) && same((a as any)[key], (b as any)[key]));
}
