/**
 * The single-field fast path (runtime/graphql/execute.ts) answers as
 * graphql-js' executor does. Every root field of the schema, and the errors a
 * client meets most (unknown model, validation, FORBIDDEN, NOT_FOUND), run
 * through the Executor and through plain `execute` on one schema and one
 * context; data and errors (as graphql-js serialises them and as the wire
 * renders them) must be equal. A write runs once per path on twin records, so
 * the ids and times the database makes are compared as placeholders.
 */
import { execute, parse, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Executor } from '../../runtime/graphql/execute.ts';
import { formatErrors } from '../../runtime/graphql/errors.ts';
import { createModelChanges } from '../../runtime/graphql/feed.ts';
import { createSchema } from '../../runtime/graphql/schema.ts';
import type { Role } from '../../runtime/ir/types.ts';
import { resolveScope } from '../../runtime/tenancy/index.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

type Path = 'fast' | 'plain';
type Variables = Record<string, unknown>;

let service: TestService;
let schema: GraphQLSchema;
let executor: Executor;
/** How each root resolver was called: the fast path passes no `info`. */
const calls: Path[] = [];
const silent = pino({ level: 'silent' });

beforeAll(async () => {
  service = await startTestService();
  const { ctx } = service;
  const services = ctx.services as any;
  schema = createSchema({
    records: services.records,
    feed: createModelChanges(services.feed, ctx.ir, ctx.access),
    streams: services.streams,
    jobs: services.jobs,
  });
  for (const root of [schema.getQueryType()!, schema.getMutationType()!]) {
    for (const field of Object.values(root.getFields())) {
      const resolve = field.resolve!;
      field.resolve = (source, args, context, info) => {
        calls.push(info === undefined ? 'fast' : 'plain');
        return resolve(source, args, context, info);
      };
    }
  }
  executor = new Executor(schema, ctx.config.graphql);
});
afterAll(() => service?.close());

async function contextAs(role: Role, userId: string) {
  await service.token({ role, userId });
  const principal = { userId, role, tenantId: null, sessionId: `session-${userId}`, email: null };
  return { caller: { principal, scope: resolveScope(principal, null), request: null } };
}

/** Database-made values (ULIDs, ISO times) as numbered placeholders, in order of appearance. */
function comparable(result: ExecutionResult): unknown {
  const wire = {
    data: result.data,
    errors: result.errors?.map((error) => ({ json: error.toJSON(), wire: formatErrors(error, silent) })),
  };
  const seen = new Map<string, string>();
  return JSON.parse(JSON.stringify(wire), (_key, value) => {
    if (typeof value !== 'string') return value;
    if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(value) && !/^\d{4}-\d\d-\d\dT[\d:.]+Z$/.test(value)) return value;
    if (!seen.has(value)) seen.set(value, `<${seen.size}>`);
    return seen.get(value);
  });
}

/** Runs `query` through both paths (each with its own variables) and returns both answers, comparable. */
async function both(role: Role, query: string, variables: (path: Path) => Variables | Promise<Variables> = () => ({})) {
  const context = await contextAs(role, `fast-path-${role}`);
  calls.length = 0;
  const fast = await executor.run({ query, variables: await variables('fast') }, context);
  const taken = calls.slice();
  const plain = await execute({ schema, document: parse(query), variableValues: await variables('plain'), contextValue: context });
  return { fast: comparable(fast), plain: comparable(plain), taken, result: fast };
}

const create = async (model: string, data: Variables) => {
  const result = await executor.run({ query: 'mutation($m: String!, $d: JSON!) { create(model: $m, data: $d) }', variables: { m: model, d: data } },
    await contextAs('Manager', 'fast-path-Manager'));
  if (result.errors) throw new Error(`create ${model}: ${JSON.stringify(result.errors)}`);
  return (result.data as { create: { id: string } }).create;
};

/** A record per path, alike but for what the database makes. */
async function twins(model: string, data: Variables): Promise<Record<Path, string>> {
  return { fast: (await create(model, data)).id, plain: (await create(model, data)).id };
}

const codesOf = (result: ExecutionResult) => result.errors?.map((error) => formatErrors(error, silent)[0].extensions?.code);

const CREATE = 'mutation($model: String!, $data: JSON!) { create(model: $model, data: $data) }';
const UPDATE = 'mutation($model: String!, $id: ID!, $data: JSON!) { update(model: $model, id: $id, data: $data) }';
const RECORD = 'query($model: String!, $id: ID!, $include: [String!]) { record(model: $model, id: $id, include: $include) }';

describe('the GraphQL fast path answers as graphql-js does', () => {
  let project: { id: string };

  beforeAll(async () => {
    project = await create('Project', { name: 'conformance' });
    for (const title of ['a', 'b', 'c']) await create('Task', { title, projectId: project.id });
  });

  it('reads: record (with include), records, paginatedRecords, deletedRecords, recordHistory', async () => {
    const cases: Array<[string, Variables, Path]> = [
      [RECORD, { model: 'Project', id: project.id, include: ['tasks'] }, 'fast'],
      [RECORD, { model: 'Project', id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }, 'fast'],
      ['query($where: JSON) { records(model: "Task", where: $where, orderBy: { title: ASC }) }', { where: { title: { in: ['a', 'c'] } } }, 'fast'],
      ['query { tasks: records(model: "Task", limit: 2) }', {}, 'fast'],
      ['query { paginatedRecords(model: "Task", first: 2) { totalCount items pageInfo { hasNextPage endCursor } } }', {}, 'plain'],
      ['query { deletedRecords(model: "Task") }', {}, 'fast'],
      ['query($id: ID!) { recordHistory(model: "Project", id: $id) { eventType version data actorId occurredAt } }', { id: project.id }, 'plain'],
    ];
    for (const [query, variables, path] of cases) {
      const answer = await both('Manager', query, () => variables);
      expect(answer.fast, query).toEqual(answer.plain);
      expect(answer.taken, query).toEqual([path]);
    }
  });

  it('writes: create, update, updateMany, delete, restore, hardDelete, enqueueJob', async () => {
    const created = await both('Manager', CREATE, () => ({ model: 'Task', data: { title: 'new', projectId: project.id } }));
    expect(created.fast).toEqual(created.plain);
    expect(created.taken).toEqual(['fast']);

    const updated = await twins('Task', { title: 'before' });
    const update = await both('Manager', UPDATE, (path) => ({ model: 'Task', id: updated[path], data: { status: 'done' } }));
    expect(update.fast).toEqual(update.plain);

    const many = await both('Manager', 'mutation($title: String!) { updateMany(model: "Task", where: { title: { eq: $title } }, data: { status: "started" }) }',
      (path) => ({ title: `many-${path}` }));
    expect(many.fast).toEqual(many.plain);

    const deleted = await twins('Task', { title: 'to delete' });
    const remove = await both('Admin', 'mutation($id: ID!) { delete(model: "Task", id: $id) }', (path) => ({ id: deleted[path] }));
    expect(remove.fast).toEqual(remove.plain);
    const restore = await both('Admin', 'mutation($id: ID!) { restore(model: "Task", id: $id) }', (path) => ({ id: deleted[path] }));
    expect(restore.fast).toEqual(restore.plain);
    const hard = await both('Admin', 'mutation($id: ID!) { hardDelete(model: "Task", id: $id) }', (path) => ({ id: deleted[path] }));
    expect(hard.fast).toEqual(hard.plain);

    const job = await both('Manager', 'mutation($key: String!) { enqueueJob(queue: "mail", kind: "digest", idempotencyKey: $key) { id } }',
      (path) => ({ key: `conformance-${path}` }));
    expect(job.fast).toEqual(job.plain);
    for (const answer of [update, many, remove, restore, hard]) expect(answer.taken).toEqual(['fast']);
    expect(job.taken).toEqual(['plain']);
    for (const answer of [created, update, many, remove, restore, hard, job]) expect(codesOf(answer.result)).toBeUndefined();
  });

  it('errors: unknown model, validation, FORBIDDEN, NOT_FOUND, a bad variable, on nullable and non-null fields', async () => {
    const missing = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const cases: Array<[Role, string, Variables, string]> = [
      ['Manager', RECORD, { model: 'Nope', id: missing }, 'VALIDATION_ERROR'],
      ['Manager', 'query { records(model: "Nope") }', {}, 'VALIDATION_ERROR'],
      ['Manager', CREATE, { model: 'Nope', data: {} }, 'VALIDATION_ERROR'],
      ['Manager', CREATE, { model: 'Task', data: { title: '' } }, 'VALIDATION_ERROR'],
      ['Manager', CREATE, { model: 'Task', data: { title: 'x', status: 'lost', unknownField: 1 } }, 'VALIDATION_ERROR'],
      ['Manager', 'query { records(model: "Task", where: { nope: { eq: 1 } }) }', {}, 'VALIDATION_ERROR'],
      ['Viewer', CREATE, { model: 'Project', data: { name: 'refused' } }, 'FORBIDDEN'],
      ['Viewer', 'mutation { updateMany(model: "Project", where: {}, data: { name: "x" }) }', {}, 'FORBIDDEN'],
      ['Manager', 'mutation($id: ID!) { hardDelete(model: "Task", id: $id) }', { id: missing }, 'FORBIDDEN'],
      ['Manager', UPDATE, { model: 'Task', id: missing, data: { title: 'x' } }, 'NOT_FOUND'],
      ['Manager', `mutation { delete(model: "Task", id: "${missing}") }`, {}, 'FORBIDDEN'],
      ['Admin', `mutation { delete(model: "Task", id: "${missing}") }`, {}, 'NOT_FOUND'],
      ['Admin', `mutation { restore(model: "Task", id: "${missing}") }`, {}, 'NOT_FOUND'],
      ['Admin', `mutation { hardDelete(model: "Task", id: "${missing}") }`, {}, 'NOT_FOUND'],
      ['Manager', `query { recordHistory(model: "Task", id: "${missing}") { version } }`, {}, 'NOT_FOUND'],
      ['Manager', 'query { deletedRecords(model: "Nope") }', {}, 'VALIDATION_ERROR'],
      ['Manager', RECORD, { model: 'Task', id: { not: 'an id' } }, 'VALIDATION_ERROR'],
    ];
    for (const [role, query, variables, code] of cases) {
      const answer = await both(role, query, () => variables);
      expect(answer.fast, `${role} ${query} ${JSON.stringify(variables)}`).toEqual(answer.plain);
      expect(codesOf(answer.result), query).toEqual([code]);
    }
  });
});
