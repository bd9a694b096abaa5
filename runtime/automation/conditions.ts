/**
 * Trigger conditions (CONTRACT sections 11 and 12): `when: { changed: [...],
 * equals: {...} }` of an action binding or a workflow's event trigger, one
 * evaluator in two forms that must agree: a test on a written record in hand
 * (the transactional path) and SQL over rows in a statement (a create folded
 * into one statement). `changed`: one of the fields' values differs from the
 * old row (setting a field to what it was is no change); `equals`: each field
 * of the new row (the old one after a delete) equals its literal.
 */
import type { EventCondition, Literal } from '../ir/types.ts';
import { sql, type Sql } from '../sql/index.ts';
import type { ColumnInfo, ModelInfo } from '../records/model.ts';
import type { Row, WrittenRecord } from '../records/index.ts';

export interface Condition {
  /** True when the write satisfies the condition. */
  matches(write: Pick<WrittenRecord, 'record' | 'old' | 'changed'>): boolean;
  /**
   * The condition as SQL over row `row` (API-shaped columns: timestamps as
   * ISO text, the rest in its SQL type) and, for `changed`, the old row `old`;
   * null when it tests nothing. Without `old`, `changed` is left out (a create
   * has no old row: the IR allows `changed` on updates only).
   */
  sql(row: Sql, old?: Sql): Sql | null;
}

const ALWAYS: Condition = { matches: () => true, sql: () => null };

/** The column a condition names: IR name (`company`) or JSON name (`companyId`). */
export function columnOf(info: ModelInfo, name: string): ColumnInfo | undefined {
  return info.columns.find((c) => c.name === name || c.field?.name === name);
}

/** Compiles `when` (null: always) against the model it watches. */
export function compileCondition(info: ModelInfo, when: EventCondition | null): Condition {
  if (!when) return ALWAYS;
  const known = (name: string) => {
    const column = columnOf(info, name);
    if (!column) throw new Error(`condition on ${info.name}: unknown field ${name}`);
    return column;
  };
  const changed = when.changed.map(known);
  const equals = Object.entries(when.equals).map(([name, literal]) => ({ column: known(name), literal }));
  return {
    matches(write) {
      if (changed.length > 0 && !changed.some((c) => fieldChanged(write, c))) return false;
      const record = write.record ?? write.old;
      return equals.every(({ column, literal }) => sameValue(column, record?.[column.name] ?? null, literal));
    },
    sql(row, old) {
      const parts = equals.map(({ column, literal }) => equalsSql(row, column, literal));
      if (old !== undefined && changed.length > 0) {
        const name = (c: ColumnInfo) => sql.ident(c.name);
        parts.unshift(sql`(${sql.join(changed.map((c) => sql`${old}.${name(c)} is distinct from ${row}.${name(c)}`), ' or ')})`);
      }
      return parts.length === 0 ? null : sql.join(parts, ' and ');
    },
  };
}

function fieldChanged(write: Pick<WrittenRecord, 'record' | 'old' | 'changed'>, column: ColumnInfo): boolean {
  if (!write.old || !write.record) return write.changed.includes(column.name);
  return !sameJson(write.old[column.name] ?? null, write.record[column.name] ?? null);
}

function sameValue(column: ColumnInfo, value: Row[string], literal: Literal | null): boolean {
  if (literal === null || value === null) return literal === value;
  if (column.sqlType === 'timestamptz') return Date.parse(String(value)) === Date.parse(String(literal));
  return value === literal;
}

/** Equality of JSON values as jsonb has it: key order does not matter. */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length
    && ka.every((key) => Object.hasOwn(b, key) && sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

function equalsSql(row: Sql, column: ColumnInfo, literal: Literal | null): Sql {
  const value = sql`${row}.${sql.ident(column.name)}`;
  if (literal === null) return sql`${value} is null`;
  if (column.sqlType === 'timestamptz') return sql`${value}::timestamptz = ${sql.value(literal, 'timestamptz')}`;
  return sql`${value} = ${sql.value(literal, column.sqlType)}`;
}
