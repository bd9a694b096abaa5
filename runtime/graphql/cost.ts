/**
 * Bounded work per GraphQL request (docs/adr/013-request-cost-limits.md):
 * before anything runs, an operation's root fields (aliases count one each)
 * and the rows it may ask for (the sum of `limit`/`first` over the document,
 * their defaults when absent, clamped as the records service clamps them, once
 * more per `include`) are checked against the configured limits. `where`
 * depth and size are checked by the records service, for every caller.
 */
import {
  GraphQLError, Kind, valueFromASTUntyped, type DocumentNode, type FieldNode, type FragmentDefinitionNode,
  type OperationDefinitionNode, type SelectionSetNode, type ValueNode,
} from 'graphql';
import type { GraphQLLimits } from '../config/index.ts';
import { LIMITS } from '../records/index.ts';

/** Tokens one document may hold: parsing stops there, so a huge document costs no more than this. */
export const MAX_TOKENS = 50_000;

export type CostLimits = Pick<GraphQLLimits, 'maxRootFields' | 'maxRows'>;

export class CostError extends GraphQLError {
  constructor(message: string) {
    super(message, { extensions: { code: 'VALIDATION_ERROR' } });
  }
}

type Fragments = ReadonlyMap<string, FragmentDefinitionNode>;

export function fragmentsOf(document: DocumentNode): Fragments {
  return new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
}

/** Fields of a selection set, fragments expanded (each fragment once: a cycle is a validation error anyway). */
function fieldsOf(set: SelectionSetNode, fragments: Fragments, seen = new Set<string>()): FieldNode[] {
  return set.selections.flatMap((s) => {
    if (s.kind === Kind.FIELD) return [s];
    if (s.kind === Kind.INLINE_FRAGMENT) return fieldsOf(s.selectionSet, fragments, seen);
    const fragment = fragments.get(s.name.value);
    if (!fragment || seen.has(s.name.value)) return [];
    seen.add(s.name.value);
    return fieldsOf(fragment.selectionSet, fragments, seen);
  });
}

/** Checked once per document, before validation: a 1,000-alias document is refused without validating it. */
export function checkRootFields(document: DocumentNode, limits: CostLimits): CostError | null {
  const fragments = fragmentsOf(document);
  for (const def of document.definitions) {
    if (def.kind !== Kind.OPERATION_DEFINITION) continue;
    const count = fieldsOf(def.selectionSet, fragments).length;
    if (count > limits.maxRootFields) {
      return new CostError(`an operation may select at most ${limits.maxRootFields} root fields (aliases count one each); this one selects ${count}`);
    }
  }
  return null;
}

const ROW_FIELDS: Record<string, { arg: string; fallback: number; max: number }> = {
  records: { arg: 'limit', fallback: LIMITS.defaultLimit, max: LIMITS.maxLimit },
  deletedRecords: { arg: 'limit', fallback: LIMITS.defaultLimit, max: LIMITS.maxLimit },
  paginatedRecords: { arg: 'first', fallback: LIMITS.defaultFirst, max: LIMITS.maxFirst },
};

function argument(field: FieldNode, name: string, variables: Record<string, unknown>): unknown {
  const node: ValueNode | undefined = field.arguments?.find((a) => a.name.value === name)?.value;
  return node ? valueFromASTUntyped(node, variables) : undefined;
}

function rowsOf(field: FieldNode, variables: Record<string, unknown>): number {
  const spec = ROW_FIELDS[field.name.value];
  if (!spec) return field.name.value === 'record' ? 1 : 0;
  const asked = argument(field, spec.arg, variables);
  const rows = typeof asked === 'number' && Number.isFinite(asked) ? Math.min(Math.max(asked, 0), spec.max) : spec.fallback;
  const include = argument(field, 'include', variables);
  return rows * (1 + (Array.isArray(include) ? include.length : 0));
}

/** The rows one operation may read, against `maxRows`; null when within it. */
export function checkRows(op: OperationDefinitionNode, fragments: Fragments, variables: Record<string, unknown>, limits: CostLimits): CostError | null {
  return checkPlannedRows(rowsPlan(op, fragments), variables, limits);
}

/**
 * The rows an operation may read, as a function of its variables: planned
 * once per cached document (its root fields, fragments expanded), and a
 * constant when no counted argument refers to a variable.
 */
export type RowsPlan = (variables: Record<string, unknown>) => number;

export function rowsPlan(op: OperationDefinitionNode, fragments: Fragments): RowsPlan {
  if (op.operation !== 'query') return () => 0;
  const fields = fieldsOf(op.selectionSet, fragments).filter((field) => Object.hasOwn(ROW_FIELDS, field.name.value) || field.name.value === 'record');
  const total = (variables: Record<string, unknown>) => fields.reduce((sum, field) => sum + rowsOf(field, variables), 0);
  if (fields.some(usesVariables)) return total;
  const constant = total({});
  return () => constant;
}

export function checkPlannedRows(plan: RowsPlan, variables: Record<string, unknown>, limits: CostLimits): CostError | null {
  const rows = plan(variables);
  if (rows <= limits.maxRows) return null;
  return new CostError(`an operation may read at most ${limits.maxRows} rows (the sum of limit and first over the document); this one may read ${rows}`);
}

/** Whether a counted argument of `field` (its row argument or `include`) holds a variable anywhere. */
function usesVariables(field: FieldNode): boolean {
  const spec = ROW_FIELDS[field.name.value];
  if (!spec) return false;
  const holds = (node: ValueNode): boolean => node.kind === Kind.VARIABLE
    || (node.kind === Kind.LIST && node.values.some(holds))
    || (node.kind === Kind.OBJECT && node.fields.some((f) => holds(f.value)));
  return (field.arguments ?? []).some((a) => (a.name.value === spec.arg || a.name.value === 'include') && holds(a.value));
}
