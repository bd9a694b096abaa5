/** Projection names: the rule is shared with the generator through runtime/ir/identifiers.ts. */
import { sql } from '../sql/index.ts';

export { pgIdentifier, projectionTableName } from '../ir/identifiers.ts';

/**
 * `"order"`: model identifiers are always quoted (fields may be called
 * `order`, `user`, `select`), by `sql.ident`, for the projection statements
 * still built as strings (tables, sync, replay, rebuild).
 */
export function q(name: string): string {
  return sql.text(sql.ident(name));
}
