/**
 * Records statements are SQL fragments (runtime/sql): every value travels as
 * a bound parameter; only identifiers from the IR (quoted by `sql.ident`) are
 * ever part of the text.
 *
 * Every records statement is built in one tenant scope (CONTRACT section 8):
 * `scopedQuery` compiles a statement only when it includes its scope's
 * fragment (`scope.predicate(alias)` as a predicate, `scope.stamp()` as the
 * value an insert writes). A statement that forgets its scope is a bug that
 * fails on its first run, in every test that reaches it.
 */
import { compile, sql, type Query, type Sql, type SqlValue } from '../sql/index.ts';
import type { TenantScope } from '../tenancy/index.ts';
import type { SqlType } from './model.ts';

export type { Query };

/** The statement, compiled; throws when it was built without `scope`'s fragment. */
export function scopedQuery(scope: TenantScope, statement: Sql): Query {
  return compile(statement, { scope });
}

/** A column's value, cast so that Postgres never guesses; jsonb travels as JSON text. */
export function columnValue(value: unknown, type: SqlType): SqlValue {
  return sql.value(toDbValue(value, type), type);
}

/** jsonb values must reach pg as JSON text (pg would turn a JS array into a Postgres array). */
export function toDbValue(value: unknown, type: SqlType): unknown {
  if (value === null || value === undefined) return null;
  return type === 'jsonb' ? JSON.stringify(value) : value;
}
