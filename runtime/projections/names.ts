/** Projection names: the rule is shared with the generator through runtime/ir/identifiers.ts. */
export { pgIdentifier, projectionTableName } from '../ir/identifiers.ts';

/** `"order"`: model identifiers are always quoted (fields may be called `order`, `user`, `select`). */
export function q(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
