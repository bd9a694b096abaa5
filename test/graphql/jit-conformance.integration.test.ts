/**
 * Compiled execution (SVC_GRAPHQL_EXECUTOR=jit, runtime/graphql/jit.ts)
 * answers as graphql-js does. A corpus covering every resolver and the
 * language's features (variables, aliases, fragments, directives, several
 * root fields, several operations, __typename, introspection) and the errors
 * clients meet (invalid variables, VALIDATION_ERROR with one error per field,
 * FORBIDDEN, NOT_FOUND, partial data, a null in a non-null field) runs through
 * graphql-js' execute() (the reference), an Executor on graphql-jit and one
 * on graphql-js (with its single-field fast path), on one schema, one database
 * and one caller. Data, errors as graphql-js serialises them, errors as the
 * wire renders them (errors.ts), the field the FORBIDDEN audit names (http.ts)
 * and the original error's class must equal the reference's. A write runs
 * once per path on triplet records; ids and times the database makes are
 * compared as numbered placeholders. The whole suite also runs on graphql-jit with
 * SVC_GRAPHQL_EXECUTOR=jit (test/helpers/service.ts passes it on).
 */
import { execute, parse, type ExecutionResult, type GraphQLError, type GraphQLSchema } from 'graphql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Executor } from '../../runtime/graphql/execute.ts';
import { compileOperation } from '../../runtime/graphql/jit.ts';
import { formatErrors } from '../../runtime/graphql/errors.ts';
import { createModelChanges } from '../../runtime/graphql/feed.ts';
import { createSchema } from '../../runtime/graphql/schema.ts';
import type { Role } from '../../runtime/ir/types.ts';
import { resolveScope } from '../../runtime/tenancy/index.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

/** graphql-jit's Executor, graphql-js' Executor (its single-field fast path included), and graphql-js' execute() alone: the reference. */
type Path = 'jit' | 'js' | 'graphql-js';
type Variables = Record<string, unknown>;

/** How each compiled run ended: answered compiled, or handed to graphql-js. */
const compiledRuns: Array<'compiled' | 'fell back'> = [];
vi.mock('../../runtime/graphql/jit.ts', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../runtime/graphql/jit.ts')>();
  return {
    ...original,
    compileOperation: (...args: Parameters<typeof original.compileOperation>) => {
      const compiled = original.compileOperation(...args);
      if (!compiled) return null;
      return async (context: unknown, variables: Variables) => {
        const result = await compiled(context, variables);
        compiledRuns.push(result ? 'compiled' : 'fell back');
        return result;
      };
    },
  };
});

let service: TestService;
let schema: GraphQLSchema;
const executors = {} as Record<Path, Executor>;
const silent = pino({ level: 'silent' });
const MISSING = '01ARZ3NDEKTSV4RRFFQ69G5FAV';

beforeAll(async () => {
  // The service itself on graphql-jit: its executor is the mocked module's too (the last test).
  service = await startTestService({ env: { SVC_GRAPHQL_EXECUTOR: 'jit' } });
  const { ctx } = service;
  const services = ctx.services as any;
  schema = createSchema({
    records: services.records,
    feed: createModelChanges(services.feed, ctx.ir, ctx.access),
    streams: services.streams,
    jobs: services.jobs,
  });
  // Model "Nulls": nulls where the schema says non-null, at the root, in a list and in an object.
  const nulls: Record<string, unknown> = {
    records: [{ id: 'x' }, null],
    create: null,
    paginatedRecords: { items: [], totalCount: null, totalCountIsEstimate: false, pageInfo: { hasNextPage: false, endCursor: null } },
  };
  for (const root of [schema.getQueryType()!, schema.getMutationType()!]) {
    for (const [name, field] of Object.entries(root.getFields())) {
      const resolve = field.resolve!;
      if (name in nulls) field.resolve = (source, args, context, info) => (args.model === 'Nulls' ? nulls[name] : resolve(source, args, context, info));
    }
  }
  executors.jit = new Executor(schema, ctx.config.graphql, undefined, compileOperation);
  executors.js = new Executor(schema, ctx.config.graphql);
});
afterAll(() => service?.close());

async function contextAs(role: Role) {
  const userId = `jit-${role}`;
  await service.token({ role, userId });
  const principal = { userId, role, tenantId: null, sessionId: `session-${userId}`, email: null };
  return { caller: { principal, scope: resolveScope(principal, null), request: null } };
}

/** What a client, the renderer and the audit see of one error. */
const seen = (error: GraphQLError) => ({
  json: error.toJSON(),
  wire: formatErrors(error, silent),
  field: error.nodes?.map((node) => (node.kind === 'Field' ? node.name.value : node.kind)),
  original: error.originalError?.constructor.name,
});

/** Database-made values (ULIDs, ISO times, cursors) as numbered placeholders, in order of appearance. */
function comparable(result: ExecutionResult): unknown {
  const wire = { data: result.data, errors: result.errors?.map(seen) };
  const placeholders = new Map<string, string>();
  return JSON.parse(JSON.stringify(wire), (_key, value) => {
    if (typeof value !== 'string') return value;
    if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(value) && !/^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(value) && !/^eyJ/.test(value)) return value;
    if (!placeholders.has(value)) placeholders.set(value, `<${placeholders.size}>`);
    return placeholders.get(value);
  });
}

interface Case {
  readonly query: string;
  readonly variables?: Variables | ((path: Path) => Variables);
  readonly operationName?: string;
  readonly role?: Role;
}

/** Runs a case each way (the reference first) and returns the answers, comparable, and how the compiled one ran. */
async function each(c: Case) {
  const context = await contextAs(c.role ?? 'Manager');
  const vars = (path: Path) => (typeof c.variables === 'function' ? c.variables(path) : c.variables ?? {});
  const reference = await execute({ schema, document: parse(c.query), variableValues: vars('graphql-js'), operationName: c.operationName, contextValue: context });
  const js = await executors.js.run({ query: c.query, variables: vars('js'), operationName: c.operationName }, context);
  compiledRuns.length = 0;
  const jit = await executors.jit.run({ query: c.query, variables: vars('jit'), operationName: c.operationName }, context);
  return { reference: comparable(reference), js: comparable(js), jit: comparable(jit), runs: compiledRuns.slice(), result: reference };
}

/** Every case answers alike; `expected`: how the compiled path ran (null: not compiled at all). */
async function expectSame(cases: readonly Case[], expected: 'compiled' | 'fell back' | null = 'compiled') {
  for (const c of cases) {
    const answer = await each(c);
    const label = `${c.role ?? 'Manager'} ${c.query} ${JSON.stringify(typeof c.variables === 'function' ? c.variables('js') : c.variables)}`;
    expect(answer.jit, `jit: ${label}`).toEqual(answer.reference);
    expect(answer.js, `js: ${label}`).toEqual(answer.reference);
    expect(answer.runs, label).toEqual(expected ? [expected] : []);
  }
}

const create = async (model: string, data: Variables) => {
  const result = await executors.js.run({ query: 'mutation($m: String!, $d: JSON!) { create(model: $m, data: $d) }', variables: { m: model, d: data } },
    await contextAs('Manager'));
  if (result.errors) throw new Error(`create ${model}: ${JSON.stringify(result.errors)}`);
  return (result.data as { create: { id: string } }).create;
};

/** A record per path, alike but for what the database makes. */
async function triplets(model: string, data: Variables): Promise<Record<Path, string>> {
  return { 'graphql-js': (await create(model, data)).id, js: (await create(model, data)).id, jit: (await create(model, data)).id };
}

const CREATE = 'mutation($model: String!, $data: JSON!) { create(model: $model, data: $data) }';
const UPDATE = 'mutation($model: String!, $id: ID!, $data: JSON!) { update(model: $model, id: $id, data: $data) }';
const RECORD = 'query($model: String!, $id: ID!, $include: [String!]) { record(model: $model, id: $id, include: $include) }';
const PAGE = `query($first: Int, $after: String, $orderBy: JSON) {
  paginatedRecords(model: "Task", first: $first, after: $after, orderBy: $orderBy, include: ["project"]) {
    items totalCount totalCountIsEstimate pageInfo { hasNextPage endCursor }
  }
}`;

describe('graphql-jit answers as graphql-js does', () => {
  let project: { id: string };
  let cursor: string;

  beforeAll(async () => {
    project = await create('Project', { name: 'conformance' });
    for (const title of ['a', 'b', 'c', 'd', 'e']) await create('Task', { title, projectId: project.id, dueAt: '2026-01-02T03:04:05Z' });
    const first = await executors.js.run({ query: PAGE, variables: { first: 2, orderBy: { title: 'DESC' } } }, await contextAs('Manager'));
    cursor = (first.data as any).paginatedRecords.pageInfo.endCursor;
  });

  it('reads: every query field, with where, orderBy, limit, offset, include and keyset pages', async () => {
    await expectSame([
      { query: RECORD, variables: { model: 'Project', id: project.id, include: ['tasks'] } },
      { query: RECORD, variables: { model: 'Project', id: MISSING } },
      { query: 'query($where: JSON) { records(model: "Task", where: $where, orderBy: { title: DESC }, limit: 3, offset: 1) }', variables: { where: { OR: [{ title: { in: ['a', 'c', 'e'] } }, { status: 'done' }] } } },
      { query: '{ records(model: "Task", include: ["project"], where: { dueAt: { isNull: false } }) }' },
      { query: PAGE, variables: { first: 2, orderBy: { title: 'DESC' } } },
      { query: PAGE, variables: { first: 2, after: cursor, orderBy: { title: 'DESC' } } },
      { query: '{ paginatedRecords(model: "Task", first: 1) { items pageInfo { hasNextPage } } }' },
      { query: '{ paginatedRecords(model: "Task") { totalCount } }' },
      { query: '{ deletedRecords(model: "Task", limit: 5) }' },
      { query: 'query($id: ID!) { recordHistory(model: "Project", id: $id) { eventId eventType version data actorId occurredAt } }', variables: { id: project.id } },
    ]);
  });

  it('the language: aliases, fragments, directives, several root fields and operations, __typename, introspection', async () => {
    await expectSame([
      { query: '{ first: records(model: "Task", limit: 1) second: records(model: "Task", limit: 1, offset: 1) __typename }' },
      {
        query: `query Tasks($withCount: Boolean!, $skipItems: Boolean = false) {
          page: paginatedRecords(model: "Task", first: 2) { ...Page totalCount @include(if: $withCount) items @skip(if: $skipItems) }
        }
        fragment Page on RecordPage { __typename pageInfo { ... on PageInfo { hasNextPage } endCursor } }`,
        variables: { withCount: false },
      },
      {
        query: 'query One { records(model: "Task", limit: 1) } query Two($id: ID!) { record(model: "Project", id: $id) }',
        operationName: 'Two', variables: { id: project.id },
      },
      { query: '{ __schema { queryType { name } types { name kind fields { name args { name type { name kind ofType { name } } } } } } }' },
      { query: '{ __type(name: "RecordPage") { name fields { name description type { kind ofType { name } } } } }' },
      { query: 'query($id: ID!) { history: recordHistory(model: "Project", id: $id) { __typename type: eventType v: version } }', variables: { id: project.id } },
    ]);
  });

  it('writes: every mutation field, in order, on triplet records', async () => {
    const updated = await triplets('Task', { title: 'before' });
    const deleted = await triplets('Task', { title: 'to delete' });
    await expectSame([
      { query: CREATE, variables: { model: 'Task', data: { title: 'new', projectId: project.id, dueAt: '2026-03-04' } } },
      { query: UPDATE, variables: (path) => ({ model: 'Task', id: updated[path], data: { status: 'done', dueAt: null } }) },
      { query: 'mutation($where: JSON!) { updateMany(model: "Task", where: $where, data: { status: "started" }) }', variables: (path) => ({ where: { title: `many-${path}` } }) },
      { query: 'mutation($id: ID!) { delete(model: "Task", id: $id) }', variables: (path) => ({ id: deleted[path] }), role: 'Admin' },
      { query: 'mutation($id: ID!) { restore(model: "Task", id: $id) }', variables: (path) => ({ id: deleted[path] }), role: 'Admin' },
      { query: 'mutation($id: ID!) { hardDelete(model: "Task", id: $id) }', variables: (path) => ({ id: deleted[path] }), role: 'Admin' },
      { query: 'mutation($key: String!) { enqueueJob(queue: "mail", kind: "digest", idempotencyKey: $key, payload: { n: 1 }) { id __typename } }', variables: (path) => ({ key: `jit-${path}` }) },
      {
        query: 'mutation($a: JSON!, $b: JSON!) { one: create(model: "Task", data: $a) two: create(model: "Task", data: $b) }',
        variables: { a: { title: 'first' }, b: { title: 'second', status: 'done' } },
      },
    ]);
  });

  it('errors: VALIDATION_ERROR (one per field), FORBIDDEN, NOT_FOUND, partial data, nulls in non-null fields', async () => {
    await expectSame([
      { query: RECORD, variables: { model: 'Nope', id: MISSING } },
      { query: '{ records(model: "Nope") }' },
      { query: CREATE, variables: { model: 'Task', data: { title: '' } } },
      { query: CREATE, variables: { model: 'Task', data: { title: 'x', status: 'lost', unknownField: 1 } } },
      { query: '{ records(model: "Task", where: { nope: { eq: 1 } }) }' },
      { query: CREATE, variables: { model: 'Project', data: { name: 'refused' } }, role: 'Viewer' },
      { query: 'mutation { refused: updateMany(model: "Project", where: {}, data: { name: "x" }) }', role: 'Viewer' },
      { query: UPDATE, variables: { model: 'Task', id: MISSING, data: { title: 'x' } } },
      { query: `mutation { delete(model: "Task", id: "${MISSING}") }` },
      { query: `mutation { restore(model: "Task", id: "${MISSING}") }`, role: 'Admin' },
      { query: `query { recordHistory(model: "Task", id: "${MISSING}") { version } }` },
      // Partial data: one root field fails, the others answer; a non-null field's error nulls the whole data.
      { query: `{ ok: records(model: "Task", limit: 1) bad: record(model: "Nope", id: "${MISSING}") }` },
      { query: `{ ok: record(model: "Task", id: "${MISSING}") page: paginatedRecords(model: "Nope") { totalCount } }` },
      { query: 'mutation($a: JSON!) { one: create(model: "Task", data: $a) two: create(model: "Nope", data: $a) }', variables: { a: { title: 'partial' } } },
      { query: '{ records(model: "Task", limit: 0) }' },
      { query: '{ records(model: "Nulls") }' },
      { query: '{ ok: records(model: "Task", limit: 1) page: paginatedRecords(model: "Nulls") { totalCount items } }' },
      { query: 'mutation { create(model: "Nulls", data: {}) }' },
    ]);
  });

  it('a variable inside a literal runs on graphql-js: graphql-jit would read it as absent', async () => {
    await triplets('Task', { title: 'literal' });
    const before = await each({ query: 'query($t: String!) { records(model: "Task", where: { title: { eq: $t } }) }', variables: { t: 'literal' } });
    expect(before.runs).toEqual([]);
    expect(before.jit).toEqual(before.reference);
    expect((before.result.data as { records: unknown[] }).records).toHaveLength(3);
    await expectSame([
      { query: 'mutation($t: String!) { updateMany(model: "Task", where: { title: $t }, data: { status: "done" }) }', variables: (path) => ({ t: `none-${path}` }) },
      { query: 'query($s: String!) { records(model: "Task", where: { OR: [{ status: $s }] }, limit: 2) }', variables: { s: 'done' } },
      { query: 'query($p: String!) { records(model: "Task", include: [$p], limit: 1) }', variables: { p: 'project' } },
    ], null);
  });

  it('variables graphql-jit refuses are worded by graphql-js', async () => {
    await expectSame([
      { query: RECORD, variables: { model: 'Task', id: { not: 'an id' } } },
      { query: RECORD, variables: { id: MISSING } },
      { query: 'query($n: Int) { records(model: "Task", limit: $n) }', variables: { n: 'ten' } },
      { query: 'query($n: Int) { records(model: "Task", limit: $n) }', variables: { n: 2.5 } },
      { query: 'query($i: [String!]) { records(model: "Task", include: $i) }', variables: { i: [null] } },
    ], 'fell back');
  });

  it('SVC_GRAPHQL_EXECUTOR=jit: the service answers over HTTP with compiled operations', async () => {
    const token = await service.token({ role: 'Manager', userId: 'jit-http' });
    compiledRuns.length = 0;
    const response = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ records(model: "Task", limit: 1) }' }),
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: { records: unknown[] } }).data.records).toHaveLength(1);
    expect(compiledRuns).toEqual(['compiled']);
  });
});
