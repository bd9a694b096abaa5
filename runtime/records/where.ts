/**
 * `where` -> SQL. A field maps to a value (equality) or to an operator
 * object; `AND`, `OR`, `NOT` combine. Field names are checked against the IR
 * and every value is a bound parameter: an unknown name, operator or a value
 * of the wrong type is a VALIDATION_ERROR naming `where.<field>`.
 */
import { invalid } from './errors.ts';
import type { ColumnInfo, ModelInfo } from './model.ts';
import { sql, type Sql } from '../sql/index.ts';
import { tenantOfSql } from '../tenancy/index.ts';
import { checkFilterValue, isPlainObject } from './values.ts';

type Operator = (c: ColumnInfo, col: Sql, value: unknown, path: string) => Sql;

const TRUE = sql`true`;
const FALSE = sql`false`;

const compare = (op: '=' | '>' | '>=' | '<' | '<='): Operator => {
  const operator = sql.raw(op);
  return (c, col, value, path) => {
    if (value === null) throw invalid(path, `${path} cannot compare with null: use isNull`);
    return sql`${col} ${operator} ${sql.value(checkFilterValue(c, value, path), c.sqlType)}`;
  };
};

/** LIKE with the pattern's own wildcards escaped: `contains: '50%'` means the text "50%". */
const like = (prefix: string, suffix: string): Operator => (c, col, value, path) => {
  if (c.sqlType !== 'text' || (c.field && c.field.type.kind !== 'scalar' && c.field.type.kind !== 'enum')) {
    throw invalid(path, `${path} is not a text field`);
  }
  if (typeof value !== 'string') throw invalid(path, `${path} must be a string`);
  const escaped = value.replace(/[\\%_]/g, (m) => `\\${m}`);
  return sql`${col} like ${sql.value(`${prefix}${escaped}${suffix}`, 'text')}`;
};

const list = (negate: boolean): Operator => (c, col, value, path) => {
  if (!Array.isArray(value)) throw invalid(path, `${path} must be a list`);
  // `in: []` matches nothing and `notIn: []` everything, as sets do.
  if (value.length === 0) return negate ? TRUE : FALSE;
  const items = value.map((v, i) => checkFilterValue(c, v, `${path}.${i}`));
  const test = sql`${col} = any(${sql.value(items, `${c.sqlType}[]`)})`;
  return negate ? sql`not coalesce(${test}, false)` : test;
};

const OPERATORS: Record<string, Operator> = {
  eq: (c, col, value, path) => (value === null ? sql`${col} is null` : compare('=')(c, col, value, path)),
  ne: (c, col, value, path) =>
    value === null ? sql`${col} is not null` : sql`${col} is distinct from ${sql.value(checkFilterValue(c, value, path), c.sqlType)}`,
  gt: compare('>'),
  gte: compare('>='),
  lt: compare('<'),
  lte: compare('<='),
  in: list(false),
  notIn: list(true),
  contains: like('%', '%'),
  startsWith: like('', '%'),
  endsWith: like('%', ''),
  isNull: (_c, col, value, path) => {
    if (typeof value !== 'boolean') throw invalid(path, `${path} must be true or false`);
    return value ? sql`${col} is null` : sql`${col} is not null`;
  },
};

export const WHERE_OPERATORS = Object.keys(OPERATORS);

function combine(parts: Sql[], joiner: ' and ' | ' or ', empty: Sql): Sql {
  if (parts.length === 0) return empty;
  return parts.length === 1 ? parts[0] : sql`(${sql.join(parts, joiner)})`;
}

function conditions(value: unknown, path: string): unknown[] {
  if (Array.isArray(value)) return value;
  if (isPlainObject(value)) return [value];
  throw invalid(path, `${path} must be a list of conditions`);
}

function fieldCondition(info: ModelInfo, key: string, value: unknown, alias: Sql): Sql {
  const path = `where.${key}`;
  const c = info.filterable.get(key);
  if (!c) throw invalid(path, `${key} is not a field of ${info.name}`);
  // The tenant compares as the API shows it: the global scope's stored `''` is null (ADR 025).
  const col = c.column === 'tenant_id' ? tenantOfSql(sql`${alias}.${c.ident}`) : sql`${alias}.${c.ident}`;
  if (!isPlainObject(value)) {
    if (Array.isArray(value)) throw invalid(path, `${path} must be a value or an operator object (use in: [...] for lists)`);
    return OPERATORS.eq(c, col, value, path);
  }
  const parts = Object.entries(value).map(([op, operand]) => {
    const operator = Object.hasOwn(OPERATORS, op) ? OPERATORS[op] : undefined;
    if (!operator) throw invalid(path, `${op} is not a where operator (use ${WHERE_OPERATORS.join(', ')})`);
    return operator(c, col, operand, `${path}.${op}`);
  });
  return combine(parts, ' and ', TRUE);
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
export function compileWhere(info: ModelInfo, where: unknown, limits: WhereLimits, alias = 't'): Sql {
  if (where === null || where === undefined) return TRUE;
  checkShape(where, limits);
  return compileConditions(info, where, sql.alias(alias));
}

function compileConditions(info: ModelInfo, where: unknown, alias: Sql): Sql {
  if (!isPlainObject(where)) throw invalid('where', 'where must be an object');
  const parts = Object.entries(where).map(([key, value]) => {
    if (key === 'AND' || key === 'OR') {
      const nested = conditions(value, `where.${key}`).map((w) => compileConditions(info, w, alias));
      return key === 'AND' ? combine(nested, ' and ', TRUE) : combine(nested, ' or ', FALSE);
    }
    if (key === 'NOT') {
      const nested = conditions(value, 'where.NOT').map((w) => compileConditions(info, w, alias));
      return sql`not coalesce(${combine(nested, ' and ', TRUE)}, false)`;
    }
    return fieldCondition(info, key, value, alias);
  });
  return combine(parts, ' and ', TRUE);
}
