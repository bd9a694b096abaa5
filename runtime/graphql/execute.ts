/**
 * Executes GraphQL requests cheaply. Parsed and validated documents are kept
 * in an LRU keyed by the query text, so a repeated query is neither parsed nor
 * validated again. An operation that is one root field returning a leaf (JSON,
 * Int, Boolean: most of our operations) skips graphql-js' executor: its
 * arguments are coerced by graphql-js and its resolver called directly.
 */
import {
  execute, getArgumentValues, getNamedType, getVariableValues, isLeafType, isNonNullType, Kind, locatedError, parse,
  validate, GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLField, type GraphQLSchema,
  type OperationDefinitionNode, type FieldNode, type GraphQLLeafType,
} from 'graphql';

interface FastField {
  readonly def: GraphQLField<unknown, unknown>;
  readonly node: FieldNode;
  readonly key: string;
  readonly leaf: GraphQLLeafType;
  readonly nonNull: boolean;
  readonly list: boolean;
}

interface Prepared {
  readonly document: DocumentNode;
  readonly operations: ReadonlyMap<string | null, { op: OperationDefinitionNode; fast: FastField | null }>;
}

type Cached = Prepared | { readonly errors: readonly GraphQLError[] };

export interface GraphQLRequest {
  readonly query: string;
  readonly variables?: Record<string, unknown> | null;
  readonly operationName?: string | null;
}

const MAX_CACHED = 500;

export class Executor {
  private readonly cache = new Map<string, Cached>();

  constructor(private readonly schema: GraphQLSchema) {}

  async run(request: GraphQLRequest, context: unknown): Promise<ExecutionResult> {
    const prepared = this.prepare(request.query);
    if ('errors' in prepared) return { errors: prepared.errors };
    const entry = prepared.operations.get(request.operationName ?? null)
      ?? (request.operationName ? undefined : prepared.operations.size === 1 ? [...prepared.operations.values()][0] : undefined);
    if (!entry) return { errors: [new GraphQLError(request.operationName ? `unknown operation ${request.operationName}` : 'operationName is required')] };
    if (entry.op.operation === 'subscription') return { errors: [new GraphQLError('subscriptions are served over WebSocket at /graphql/ws')] };
    if (entry.fast) return this.runFast(entry.op, entry.fast, request.variables ?? {}, context);
    return execute({ schema: this.schema, document: prepared.document, variableValues: request.variables, operationName: request.operationName, contextValue: context });
  }

  private prepare(query: string): Cached {
    const hit = this.cache.get(query);
    if (hit) {
      // Re-insert: a Map iterates in insertion order, so the first key is the least recently used.
      this.cache.delete(query);
      this.cache.set(query, hit);
      return hit;
    }
    const prepared = this.compile(query);
    if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(query, prepared);
    return prepared;
  }

  private compile(query: string): Cached {
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch (error) {
      return { errors: [error as GraphQLError] };
    }
    const errors = validate(this.schema, document);
    if (errors.length > 0) return { errors };
    const operations = new Map<string | null, { op: OperationDefinitionNode; fast: FastField | null }>();
    for (const def of document.definitions) {
      if (def.kind !== Kind.OPERATION_DEFINITION) continue;
      operations.set(def.name?.value ?? null, { op: def, fast: this.fastField(def, document) });
    }
    return { document, operations };
  }

  private fastField(op: OperationDefinitionNode, document: DocumentNode): FastField | null {
    if (op.operation === 'subscription' || document.definitions.length !== 1) return null;
    const [node] = op.selectionSet.selections;
    if (op.selectionSet.selections.length !== 1 || node.kind !== Kind.FIELD || node.directives?.length) return null;
    const root = op.operation === 'query' ? this.schema.getQueryType() : this.schema.getMutationType();
    const def = root?.getFields()[node.name.value];
    if (!def?.resolve) return null;
    const named = getNamedType(def.type);
    if (!isLeafType(named)) return null;
    const inner = isNonNullType(def.type) ? def.type.ofType : def.type;
    return { def, node, key: node.alias?.value ?? node.name.value, leaf: named, nonNull: isNonNullType(def.type), list: 'ofType' in inner };
  }

  private async runFast(op: OperationDefinitionNode, f: FastField, inputs: Record<string, unknown>, context: unknown): Promise<ExecutionResult> {
    const variables = getVariableValues(this.schema, op.variableDefinitions ?? [], inputs);
    if (variables.errors) return { errors: variables.errors };
    try {
      const args = getArgumentValues(f.def, f.node, variables.coerced);
      const value = await f.def.resolve!(undefined, args, context, undefined as never);
      return { data: { [f.key]: this.serialize(f, value) } };
    } catch (error) {
      const located = locatedError(error, [f.node], [f.key]);
      return { data: f.nonNull ? null : { [f.key]: null }, errors: [located] };
    }
  }

  private serialize(f: FastField, value: unknown): unknown {
    if (value === null || value === undefined) {
      if (f.nonNull) throw new Error(`${f.key} resolved to null`);
      return null;
    }
    if (f.list) return (value as unknown[]).map((item) => f.leaf.serialize(item));
    return f.leaf.serialize(value);
  }
}
