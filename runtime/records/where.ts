/**
 * `where` -> SQL. A field maps to a value (equality) or to an operator
 * object; `AND`, `OR`, `NOT` combine. Field names are checked against the IR
 * and every value is a bound parameter: an unknown name, operator or a value
 * of the wrong type is a VALIDATION_ERROR naming `where.<field>`.
 */
import { invalid } from './errors.ts';
import type { ColumnInfo, ModelInfo } from './model.ts';
import type { Params } from './sql.ts';
import { checkFilterValue, isPlainObject } from './values.ts';

type Operator = (c: ColumnInfo, col: string, value: unknown, p: Params, path: string) => string;

const compare = (op: string): Operator => (c, col, value, p, path) => {
  if (value === null) throw invalid(path, `${path} cannot compare with null: use isNull`);
  return `${col} ${op} ${p.add(checkFilterValue(c, value, path), c.sqlType)}`;
};

/** LIKE with the pattern's own wildcards escaped: `contains: '50%'` means the text "50%". */
const like = (prefix: string, suffix: string): Operator => (c, col, value, p, path) => {
  if (c.sqlType !== 'text' || (c.field && c.field.type.kind !== 'scalar' && c.field.type.kind !== 'enum')) {
    throw invalid(path, `${path} is not a text field`);
  }
  if (typeof value !== 'string') throw invalid(path, `${path} must be a string`);
  const escaped = value.replace(/[\\%_]/g, (m) => `\\${m}`);
  return `${col} like ${p.add(`${prefix}${escaped}${suffix}`, 'text')}`;
};

const list = (negate: boolean): Operator => (c, col, value, p, path) => {
  if (!Array.isArray(value)) throw invalid(path, `${path} must be a list`);
  // `in: []` matches nothing and `notIn: []` everything, as sets do.
  if (value.length === 0) return negate ? 'true' : 'false';
  const items = value.map((v, i) => checkFilterValue(c, v, `${path}.${i}`));
  const test = `${col} = any(${p.add(items, `${c.sqlType}[]`)})`;
  return negate ? `not coalesce(${test}, false)` : test;
};

const OPERATORS: Record<string, Operator> = {
  eq: (c, col, value, p, path) => (value === null ? `${col} is null` : compare('=')(c, col, value, p, path)),
  ne: (c, col, value, p, path) =>
    value === null ? `${col} is not null` : `${col} is distinct from ${p.add(checkFilterValue(c, value, path), c.sqlType)}`,
  gt: compare('>'),
  gte: compare('>='),
  lt: compare('<'),
  lte: compare('<='),
  in: list(false),
  notIn: list(true),
  contains: like('%', '%'),
  startsWith: like('', '%'),
  endsWith: like('%', ''),
  isNull: (_c, col, value, _p, path) => {
    if (typeof value !== 'boolean') throw invalid(path, `${path} must be true or false`);
    return value ? `${col} is null` : `${col} is not null`;
  },
};

export const WHERE_OPERATORS = Object.keys(OPERATORS);

function combine(parts: string[], joiner: ' and ' | ' or ', empty: string): string {
  if (parts.length === 0) return empty;
  return parts.length === 1 ? parts[0] : `(${parts.join(joiner)})`;
}

function conditions(value: unknown, path: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (isPlainObject(value)) return [value];
  throw invalid(path, `${path} must be a list of conditions`);
}

function fieldCondition(info: ModelInfo, key: string, value: unknown, p: Params, alias: string): string {
  const path = `where.${key}`;
  const c = info.filterable.get(key);
  if (!c) throw invalid(path, `${key} is not a field of ${info.name}`);
  const col = `${alias}.${c.quoted}`;
  if (!isPlainObject(value)) {
    if (Array.isArray(value)) throw invalid(path, `${path} must be a value or an operator object (use in: [...] for lists)`);
    return OPERATORS.eq(c, col, value, p, path);
  }
  const parts = Object.entries(value).map(([op, operand]) => {
    const operator = Object.hasOwn(OPERATORS, op) ? OPERATORS[op] : undefined;
    if (!operator) throw invalid(path, `${op} is not a where operator (use ${WHERE_OPERATORS.join(', ')})`);
    return operator(c, col, operand, p, `${path}.${op}`);
  });
  return combine(parts, ' and ', 'true');
}

export interface WhereLimits {
  /** Nesting levels of objects and lists. */
  readonly maxDepth: number;
  /** Objects, lists and values in all. */
  readonly maxNodes: number;
}

/** Bounds checked before compiling, iteratively: a 5,000-deep `where` is refused, never a stack overflow. */
function checkShape(where: unknown, limits: WhereLimits): void {
  const stack: Array<[unknown, number]> = [[where, 1]];
  let nodes = 0;
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (++nodes > limits.maxNodes) throw invalid('where', `where has more than ${limits.maxNodes} conditions and values`);
    if (typeof value !== 'object' || value === null) continue;
    if (depth > limits.maxDepth) throw invalid('where', `where nests deeper than ${limits.maxDepth} levels`);
    for (const item of Array.isArray(value) ? value : Object.values(value)) stack.push([item, depth + 1]);
  }
}

/** SQL boolean expression for `where` over the table aliased `alias`; `true` when empty. */
export function compileWhere(info: ModelInfo, where: unknown, p: Params, limits: WhereLimits, alias = 't'): string {
  if (where === null || where === undefined) return 'true';
  checkShape(where, limits);
  return compileConditions(info, where, p, alias);
}

function compileConditions(info: ModelInfo, where: unknown, p: Params, alias: string): string {
  if (!isPlainObject(where)) throw invalid('where', 'where must be an object');
  const parts = Object.entries(where).map(([key, value]) => {
    if (key === 'AND' || key === 'OR') {
      const nested = conditions(value, `where.${key}`).map((w) => compileConditions(info, w, p, alias));
      return key === 'AND' ? combine(nested, ' and ', 'true') : combine(nested, ' or ', 'false');
    }
    if (key === 'NOT') {
      const nested = conditions(value, 'where.NOT').map((w) => compileConditions(info, w, p, alias));
      return `not coalesce(${combine(nested, ' and ', 'true')}, false)`;
    }
    return fieldCondition(info, key, value, p, alias);
  });
  return combine(parts, ' and ', 'true');
}
