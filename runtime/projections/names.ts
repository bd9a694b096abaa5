/** Projection names: the rule is shared with the generator through runtime/ir/identifiers.ts. */
export { pgIdentifier, projectionTableName } from '../ir/identifiers.ts';
