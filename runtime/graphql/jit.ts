/**
 * Compiled execution (graphql-jit) of a cached operation, taken when
 * SVC_GRAPHQL_EXECUTOR=jit. graphql-js stays the reference: where graphql-jit
 * answers differently, the answer is made graphql-js' here, and what it cannot
 * do as graphql-js does runs on graphql-js instead.
 *
 * - Its errors are rebuilt with graphql-js' `locatedError` on the field nodes
 *   graphql-js would name (graphql-jit keeps only their locations), so the
 *   renderer (errors.ts) and the FORBIDDEN audit (http.ts) see the same error.
 *   An error graphql-jit raises itself (a null in a non-null field) gets an
 *   original error, as graphql-js' does.
 * - Variables it cannot coerce: graphql-js runs the request and words why.
 * - A document it cannot compile runs on graphql-js, and so does one with a
 *   variable inside a literal (`where: { title: $t }`): graphql-jit parses a
 *   custom scalar's literal once, at compile time, without the variables, so
 *   `$t` would read as absent (an `updateMany` would match every row).
 *
 * test/graphql/jit-conformance.integration.test.ts runs the operations of a
 * corpus through both and compares data and errors.
 */
import { GraphQLError, Kind, locatedError, visit, type DocumentNode, type ExecutionResult, type FieldNode, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';

/** An operation compiled by graphql-jit: its answer, or null when graphql-js must answer instead. */
export type CompiledOperation = (context: unknown, variables: Record<string, unknown>) => Promise<ExecutionResult | null>;

/** `operation` of `document` compiled, or null when graphql-jit cannot compile it. */
export function compileOperation(schema: GraphQLSchema, document: DocumentNode, operation: string | null): CompiledOperation | null {
  if (hasVariableInLiteral(document)) return null;
  let compiled;
  try {
    // No stack captured for its own errors: they are rebuilt below.
    compiled = compileQuery(schema, document, operation ?? undefined, { disablingCapturingStackErrors: true });
  } catch {
    return null;
  }
  if (!isCompiledQuery(compiled)) return null;
  const run = compiled.query;
  const fields = fieldsByLocation(document);
  return async (context, variables) => {
    const result = await run(undefined, context, variables);
    // No data: its variables were refused before execution; graphql-js says why, in its words.
    if (result.data === undefined) return null;
    if (!result.errors) return result;
    return { data: result.data, errors: result.errors.map((error) => asGraphqlJs(error, fields)) };
  };
}

/** Does an argument's literal (an object or a list) hold a variable? */
function hasVariableInLiteral(document: DocumentNode): boolean {
  let found = false;
  visit(document, {
    [Kind.ARGUMENT](node) {
      if (node.value.kind === Kind.VARIABLE) return false;
      visit(node.value, { [Kind.VARIABLE]() { found = true; } });
      return false;
    },
  });
  return found;
}

const at = (line: number, column: number) => `${line}:${column}`;

/** Every field node of the document by the location graphql-jit reports for it. */
function fieldsByLocation(document: DocumentNode): ReadonlyMap<string, FieldNode> {
  const fields = new Map<string, FieldNode>();
  visit(document, {
    [Kind.FIELD](node: FieldNode) {
      if (node.loc) fields.set(at(node.loc.startToken.line, node.loc.startToken.column), node);
    },
  });
  return fields;
}

/** graphql-js' error for what graphql-jit reported: `locatedError` of the same original on the same nodes and path. */
function asGraphqlJs(error: GraphQLError, fields: ReadonlyMap<string, FieldNode>): GraphQLError {
  const nodes = (error.locations ?? []).map((l) => fields.get(at(l.line, l.column))).filter((n): n is FieldNode => n !== undefined);
  // graphql-js raises its own execution errors (a null for a non-null field) as plain Errors, then locates them.
  const original = error.originalError ?? new Error(error.message);
  return locatedError(original, nodes.length > 0 ? nodes : undefined, error.path);
}
