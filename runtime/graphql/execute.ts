/**
 * Executes GraphQL requests cheaply. Parsed and validated documents are kept
 * in an LRU keyed by the query text, so a repeated query is neither parsed nor
 * validated again. An operation that is one root field returning a leaf (JSON,
 * Int, Boolean: most of our operations) skips graphql-js' executor: its
 * arguments are coerced by graphql-js and its resolver called directly.
 * Given graphql-jit's compiler (SVC_GRAPHQL_EXECUTOR=jit), every operation is
 * compiled once beside its parsed document and run compiled (jit.ts).
 */
import {
  execute, getArgumentValues, getNamedType, getVariableValues, isLeafType, isListType, isNonNullType, Kind, locatedError, parse,
  validate, GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLField, type GraphQLSchema,
  type OperationDefinitionNode, type FieldNode, type GraphQLLeafType,
} from 'graphql';
import { LRUCache } from 'lru-cache';
import type { GraphQLLimits } from '../config/index.ts';
import { checkPlannedRows, checkRootFields, fragmentsOf, MAX_TOKENS, rowsPlan, type RowsPlan } from './cost.ts';
import type { GraphqlOperationType, GraphqlOutcome } from '../metrics/index.ts';
import type { CompiledOperation, compileOperation } from './jit.ts';

/** graphql-jit's compiler (jit.ts), given when SVC_GRAPHQL_EXECUTOR=jit: loaded only then (it costs ~140 ms of CPU to load). */
export type OperationCompiler = typeof compileOperation;

export type OperationObserver = (type: GraphqlOperationType, outcome: GraphqlOutcome, seconds: number) => void;

interface FastField {
  readonly def: GraphQLField<unknown, unknown>;
  readonly node: FieldNode;
  readonly key: string;
  readonly leaf: GraphQLLeafType;
  readonly nonNull: boolean;
  readonly list: boolean;
  /** A list whose items are non-null (`[JSON!]!`). */
  readonly itemsNonNull: boolean;
  /** graphql-js' message for a null where the schema says non-null. */
  readonly nullMessage: string;
}

/** A null where the schema says non-null, at `path` (graphql-js raises it as a plain Error). */
class NullValue extends Error {
  constructor(message: string, readonly path: ReadonlyArray<string | number>) {
    super(message);
  }
}

interface Operation {
  readonly op: OperationDefinitionNode;
  readonly fast: FastField | null;
  /** The rows it may read (request cost limits), planned once. */
  readonly rows: RowsPlan;
  /** Compiled by graphql-jit (SVC_GRAPHQL_EXECUTOR=jit); null: not compiled, graphql-js runs it. */
  readonly compiled: CompiledOperation | null;
}

interface Prepared {
  readonly document: DocumentNode;
  readonly operations: ReadonlyMap<string | null, Operation>;
}

type Cached = Prepared | { readonly errors: readonly GraphQLError[] };

export interface GraphQLRequest {
  readonly query: string;
  readonly variables?: Record<string, unknown> | null;
  readonly operationName?: string | null;
}

const MAX_CACHED = 500;

export class Executor {
  private readonly cache = new LRUCache<string, Cached>({ max: MAX_CACHED });

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly limits: GraphQLLimits,
    /** Told of every operation run over HTTP (metrics). */
    private readonly observe: OperationObserver = () => undefined,
    /** Compiles each cached operation (SVC_GRAPHQL_EXECUTOR=jit); without it graphql-js runs them. */
    private readonly compileJit?: OperationCompiler,
  ) {}

  async run(request: GraphQLRequest, context: unknown): Promise<ExecutionResult> {
    const started = performance.now();
    const prepared = this.prepare(request.query);
    if ('errors' in prepared) return this.observed('unknown', 'invalid', started, { errors: prepared.errors });
    const entry = select(prepared, request.operationName);
    if (!entry) return this.observed('unknown', 'invalid', started, { errors: [new GraphQLError(request.operationName ? `unknown operation ${request.operationName}` : 'operationName is required')] });
    const type = entry.op.operation;
    if (type === 'subscription') return this.observed(type, 'invalid', started, { errors: [new GraphQLError('subscriptions are served over WebSocket at /graphql/ws')] });
    const tooCostly = checkPlannedRows(entry.rows, request.variables ?? {}, this.limits);
    if (tooCostly) return this.observed(type, 'invalid', started, { errors: [tooCostly] });
    const result = await withTimeout(this.execute(prepared, entry, request, context), this.limits.timeoutMs);
    return this.observed(type, result.errors ? 'error' : 'success', started, result);
  }

  private async execute(prepared: Prepared, entry: Operation, request: GraphQLRequest, context: unknown): Promise<ExecutionResult> {
    const variables = request.variables ?? {};
    const compiled = entry.compiled && await entry.compiled(context, variables);
    if (compiled) return compiled;
    if (entry.fast) return this.runFast(entry.op, entry.fast, variables, context);
    return execute({ schema: this.schema, document: prepared.document, variableValues: request.variables, operationName: request.operationName, contextValue: context });
  }

  /**
   * The type of the operation `request` selects (GET may run queries only), or
   * null when it selects none: `run` then answers why.
   */
  operationOf(request: GraphQLRequest): 'query' | 'mutation' | 'subscription' | null {
    const prepared = this.prepare(request.query);
    if ('errors' in prepared) return null;
    return select(prepared, request.operationName)?.op.operation ?? null;
  }

  private observed(type: GraphqlOperationType, outcome: GraphqlOutcome, started: number, result: ExecutionResult): ExecutionResult {
    this.observe(type, outcome, (performance.now() - started) / 1000);
    return result;
  }

  private prepare(query: string): Cached {
    const hit = this.cache.get(query);
    if (hit) return hit;
    const prepared = this.compile(query);
    this.cache.set(query, prepared);
    return prepared;
  }

  private compile(query: string): Cached {
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: MAX_TOKENS });
    } catch (error) {
      return { errors: [error instanceof GraphQLError ? error : new GraphQLError('the document could not be parsed')] };
    }
    const tooWide = checkRootFields(document, this.limits);
    if (tooWide) return { errors: [tooWide] };
    const errors = validate(this.schema, document);
    if (errors.length > 0) return { errors };
    const fragments = fragmentsOf(document);
    const operations = new Map<string | null, Operation>();
    for (const def of document.definitions) {
      if (def.kind !== Kind.OPERATION_DEFINITION) continue;
      const name = def.name?.value ?? null;
      const compiled = this.compileJit && def.operation !== 'subscription' ? this.compileJit(this.schema, document, name) : null;
      operations.set(name, { op: def, fast: this.fastField(def, document), rows: rowsPlan(def, fragments), compiled });
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
    const list = isListType(inner);
    return {
      def, node, key: node.alias?.value ?? node.name.value, leaf: named, nonNull: isNonNullType(def.type), list,
      itemsNonNull: list && isNonNullType(inner.ofType), nullMessage: `Cannot return null for non-nullable field ${root!.name}.${def.name}.`,
    };
  }

  private async runFast(op: OperationDefinitionNode, f: FastField, inputs: Record<string, unknown>, context: unknown): Promise<ExecutionResult> {
    const variables = getVariableValues(this.schema, op.variableDefinitions ?? [], inputs);
    if (variables.errors) return { errors: variables.errors };
    try {
      const args = getArgumentValues(f.def, f.node, variables.coerced);
      const value = await f.def.resolve!(undefined, args, context, undefined as never);
      return { data: { [f.key]: serialize(f, value) } };
    } catch (error) {
      const located = error instanceof NullValue ? locatedError(new Error(error.message), [f.node], error.path) : locatedError(error, [f.node], [f.key]);
      return { data: f.nonNull ? null : { [f.key]: null }, errors: [located] };
    }
  }
}

/** The resolver's value as graphql-js completes it: serialized, a null where the schema says non-null an error. */
function serialize(f: FastField, value: unknown): unknown {
  if (value === null || value === undefined) {
    if (f.nonNull) throw new NullValue(f.nullMessage, [f.key]);
    return null;
  }
  if (!f.list) return f.leaf.serialize(value);
  return (value as unknown[]).map((item, i) => {
    if (item !== null && item !== undefined) return f.leaf.serialize(item);
    if (f.itemsNonNull) throw new NullValue(f.nullMessage, [f.key, i]);
    return null;
  });
}

/** The operation named `name`, or the only one when no name is given. */
function select(prepared: Prepared, name: string | null | undefined) {
  return prepared.operations.get(name ?? null)
    ?? (name ? undefined : prepared.operations.size === 1 ? [...prepared.operations.values()][0] : undefined);
}

/**
 * The request's answer, or a time-limit error once `ms` have passed. The work
 * is not cancelled (its statements finish on their own), but the client is
 * answered and the response is never built.
 */
function withTimeout(work: Promise<ExecutionResult>, ms: number): Promise<ExecutionResult> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<ExecutionResult>((resolve) => {
    timer = setTimeout(() => resolve({ errors: [new GraphQLError(`the request exceeded its time limit of ${ms} ms`)] }), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
