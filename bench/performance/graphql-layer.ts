/**
 * `npx tsx bench/performance/graphql-layer.ts`: what the GraphQL layer itself
 * costs per request for the documents the read and create rows send, with
 * the resolver's work taken away (it returns a fixed value): CPU microseconds
 * per operation, in one process, for
 *
 *   graphql-js   execute() on the parsed, validated document (what svc-gen ran before its fast path)
 *   graphql-jit  the document compiled once by graphql-jit (compileQuery), then run
 *   fast path    what svc-gen's Executor does for one root field returning a leaf
 *                (runtime/graphql/execute.ts): coerce variables and arguments, call the resolver, serialize
 *   Executor js / Executor jit
 *                svc-gen's Executor.run() whole (document cache, cost plan, time limit) on svc-gen's own
 *                schema (runtime/graphql/schema.ts, a records service returning the same fixed values),
 *                with SVC_GRAPHQL_EXECUTOR=js (the fast path) and =jit (graphql-jit, runtime/graphql/jit.ts)
 *
 * The figures decide whether compiled execution is worth adopting (docs/performance.md).
 */
import { buildSchema, execute, getArgumentValues, getVariableValues, parse, type FieldNode, type OperationDefinitionNode } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { loadConfig } from '../../runtime/config/index.ts';
import { Executor } from '../../runtime/graphql/execute.ts';
import { compileOperation } from '../../runtime/graphql/jit.ts';
import { createSchema, type SchemaServices } from '../../runtime/graphql/schema.ts';

const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 200_000);

const schema = buildSchema(`
  scalar JSON
  type Query { records(model: String!, limit: Int): JSON }
  type Mutation { create(model: String!, data: JSON!): JSON }
`);
const row = { id: '01JBENCH0000000000000000000', name: 'bench', price: 1 };
const rows = Array.from({ length: 20 }, (_, i) => ({ ...row, id: `${row.id}${i}` }));
schema.getQueryType()!.getFields().records.resolve = () => rows;
schema.getMutationType()!.getFields().create.resolve = () => row;

const documents = {
  read: { query: '{ records(model: "Item", limit: 20) }', variables: {} },
  create: { query: 'mutation($d: JSON!) { create(model: "Item", data: $d) }', variables: { d: { name: 'bench', price: 1 } } },
};

async function timed(label: string, run: () => unknown): Promise<number> {
  for (let i = 0; i < ITERATIONS / 10; i++) await run(); // warm-up: JIT
  const before = process.cpuUsage();
  for (let i = 0; i < ITERATIONS; i++) await run();
  const spent = process.cpuUsage(before);
  const us = (spent.user + spent.system) / ITERATIONS;
  console.log(`${label.padEnd(24)} ${us.toFixed(2).padStart(7)} us/op`);
  return us;
}

// svc-gen's schema (its own graphql-js instance: the one above is the bench folder's) over a records service that answers at once.
const services = { records: { list: async () => rows, create: async () => row } } as unknown as SchemaServices;
const svcSchema = createSchema(services);
const limits = loadConfig({}).graphql;
const executors = { js: new Executor(svcSchema, limits), jit: new Executor(svcSchema, limits, undefined, compileOperation) };

for (const [name, { query, variables }] of Object.entries(documents)) {
  const document = parse(query);
  const op = document.definitions[0] as OperationDefinitionNode;
  const node = op.selectionSet.selections[0] as FieldNode;
  const root = op.operation === 'query' ? schema.getQueryType()! : schema.getMutationType()!;
  const field = root.getFields()[node.name.value];
  const compiled = compileQuery(schema, document);
  if (!isCompiledQuery(compiled)) throw new Error(`graphql-jit could not compile ${query}`);
  console.log(`\n${name}: ${query}`);
  await timed('graphql-js execute', () => execute({ schema, document, variableValues: variables }));
  await timed('graphql-jit compiled', () => compiled.query(undefined, undefined, variables));
  await timed('svc-gen fast path', async () => {
    const coerced = getVariableValues(schema, op.variableDefinitions ?? [], variables);
    if (coerced.errors) throw coerced.errors[0];
    const args = getArgumentValues(field, node, coerced.coerced);
    return { data: { [node.name.value]: await field.resolve!(undefined, args, undefined, undefined as never) } };
  });
}

for (const [name, { query, variables }] of Object.entries(documents)) {
  console.log(`\n${name}, svc-gen's Executor.run(): ${query}`);
  for (const [executor, run] of Object.entries(executors)) {
    const answer = await run.run({ query, variables }, {});
    if (answer.errors) throw new Error(`${executor}: ${JSON.stringify(answer.errors)}`);
    await timed(`Executor ${executor}`, () => run.run({ query, variables }, {}));
  }
}
