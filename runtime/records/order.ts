/**
 * `orderBy` -> sort keys (ties always broken by id), and the opaque keyset
 * cursors of `paginatedRecords`: a cursor holds the sort-key values of the
 * last row, so a page continues after that row even while rows are inserted.
 */
import { invalid } from './errors.ts';
import type { ColumnInfo, ModelInfo } from './model.ts';
import { sql, type Sql } from '../sql/index.ts';
import { checkFilterValue, isPlainObject } from './values.ts';

export interface SortKey {
  readonly column: ColumnInfo;
  readonly desc: boolean;
}

function direction(value: unknown, path: string): boolean {
  const text = typeof value === 'string' ? value.toUpperCase() : '';
  if (text !== 'ASC' && text !== 'DESC') throw invalid(path, `${path} must be ASC or DESC`);
  return text === 'DESC';
}

/** `{a: 'ASC', b: 'DESC'}` or `[{a: 'ASC'}, {b: 'DESC'}]`, keys applied in order, then id. */
export function sortKeys(info: ModelInfo, orderBy: unknown): SortKey[] {
  const keys: SortKey[] = [];
  if (orderBy !== null && orderBy !== undefined) {
    const entries = Array.isArray(orderBy) ? orderBy : [orderBy];
    for (const entry of entries) {
      if (!isPlainObject(entry)) throw invalid('orderBy', 'orderBy must be an object of field to ASC or DESC');
      for (const [key, dir] of Object.entries(entry)) {
        const column = info.filterable.get(key);
        if (!column || column.sqlType === 'jsonb') throw invalid(`orderBy.${key}`, `${key} is not a sortable field of ${info.name}`);
        if (keys.some((k) => k.column === column)) throw invalid(`orderBy.${key}`, `${key} is given twice`);
        keys.push({ column, desc: direction(dir, `orderBy.${key}`) });
      }
    }
  }
  if (!keys.some((k) => k.column.column === 'id')) keys.push({ column: info.filterable.get('id')!, desc: false });
  return keys.slice(0, keys.findIndex((k) => k.column.column === 'id') + 1);
}

const DESC = sql.raw('desc nulls first');
const ASC = sql.raw('asc nulls last');

export function orderSql(keys: readonly SortKey[], alias = 't'): Sql {
  const table = sql.alias(alias);
  return sql.join(keys.map((k) => sql`${table}.${k.column.ident} ${k.desc ? DESC : ASC}`), ', ');
}

// ------------------------------------------------------------------ cursors

const signature = (keys: readonly SortKey[]) => keys.map((k) => `${k.column.column}${k.desc ? '-' : '+'}`).join(',');

const exactName = (i: number) => `__cursor_${i}`;

/**
 * Extra select columns with the exact (microsecond) value of each timestamp
 * sort key: responses show milliseconds, and a cursor made from a rounded
 * value would repeat or skip rows. Removed from the rows by `takeCursor`.
 */
export function exactCursorColumns(keys: readonly SortKey[], alias = 't'): Sql {
  const table = sql.alias(alias);
  return sql.join(keys.map((k, i) => (k.column.sqlType === 'timestamptz'
    ? sql`, to_char(${table}.${k.column.ident} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as ${sql.ident(exactName(i))}`
    : sql.empty)), '');
}

/** The cursor after `last` (null without one); removes the exact columns from every row. */
export function takeCursor(keys: readonly SortKey[], rows: Record<string, unknown>[], last: Record<string, unknown> | undefined): string | null {
  const cursor = last ? encodeCursor(keys, last) : null;
  for (const row of rows) keys.forEach((_, i) => delete row[exactName(i)]);
  return cursor;
}

function encodeCursor(keys: readonly SortKey[], row: Record<string, unknown>): string {
  const values = keys.map((k, i) => row[exactName(i)] ?? row[k.column.name] ?? null);
  return Buffer.from(JSON.stringify({ k: signature(keys), v: values })).toString('base64url');
}

function decodeCursor(keys: readonly SortKey[], cursor: string): unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid('after', 'after is not a valid cursor');
  }
  if (!isPlainObject(parsed) || !Array.isArray(parsed.v) || parsed.v.length !== keys.length) {
    throw invalid('after', 'after is not a valid cursor');
  }
  if (parsed.k !== signature(keys)) throw invalid('after', 'after was issued for a different orderBy');
  return parsed.v;
}

/** Rows strictly after `value` in one key's order (nulls sort last ascending, first descending). */
function after(key: SortKey, col: Sql, value: unknown): Sql {
  if (value === null) return key.desc ? sql`${col} is not null` : sql`false`;
  const v = sql.value(checkFilterValue(key.column, value, 'after'), key.column.sqlType);
  return key.desc ? sql`${col} < ${v}` : sql`(${col} > ${v} or ${col} is null)`;
}

function equal(key: SortKey, col: Sql, value: unknown): Sql {
  if (value === null) return sql`${col} is null`;
  return sql`${col} = ${sql.value(checkFilterValue(key.column, value, 'after'), key.column.sqlType)}`;
}

/** `(k1 after v1) or (k1 = v1 and k2 after v2) or ...`: the rows following the cursor. */
export function afterCursorSql(keys: readonly SortKey[], cursor: string, alias = 't'): Sql {
  const values = decodeCursor(keys, cursor);
  const table = sql.alias(alias);
  const branches = keys.map((key, i) => {
    const prefix = keys.slice(0, i).map((k, j) => equal(k, sql`${table}.${k.column.ident}`, values[j]));
    return sql`(${sql.join([...prefix, after(key, sql`${table}.${key.column.ident}`, values[i])], ' and ')})`;
  });
  return sql`(${sql.join(branches, ' or ')})`;
}
