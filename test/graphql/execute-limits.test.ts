/** The executor's own limits: the per-request time limit and the document size. */
import { buildSchema, type GraphQLSchema } from 'graphql';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config/index.ts';
import { Executor } from '../../runtime/graphql/index.ts';

function slowSchema(ms: number): GraphQLSchema {
  const schema = buildSchema('type Query { slow: Int fast: Int }');
  const fields = schema.getQueryType()!.getFields();
  fields.slow.resolve = () => new Promise((done) => setTimeout(() => done(1), ms));
  fields.fast.resolve = () => 2;
  return schema;
}

describe('Executor limits', () => {
  it('answers a request that outlives SVC_GRAPHQL_TIMEOUT_MS with an error, at the limit', async () => {
    const limits = loadConfig({ SVC_GRAPHQL_TIMEOUT_MS: '50' }).graphql;
    const executor = new Executor(slowSchema(2_000), limits);
    const started = performance.now();
    const result = await executor.run({ query: '{ slow }' }, {});
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(result.errors?.[0].message).toMatch(/time limit of 50 ms/);
    expect(await executor.run({ query: '{ fast }' }, {})).toEqual({ data: { fast: 2 } });
  });

  it('refuses a document with too many tokens before validating it', async () => {
    const executor = new Executor(slowSchema(0), loadConfig({}).graphql);
    const result = await executor.run({ query: `{ fast ${'__typename '.repeat(60_000)} }` }, {});
    expect(result.errors?.[0].message).toMatch(/more that 50000 tokens/);
  });

  it('plans the rows of a cached document once, and still counts its variables on every run', async () => {
    const schema = buildSchema('type Query { records(limit: Int, include: [String]): Int }');
    schema.getQueryType()!.getFields().records.resolve = () => 1;
    const executor = new Executor(schema, loadConfig({ SVC_GRAPHQL_MAX_ROWS: '300' }).graphql);
    const literal = '{ a: records(limit: 200) b: records(limit: 200) }';
    for (let run = 0; run < 2; run++) {
      expect((await executor.run({ query: literal }, {})).errors?.[0].message).toMatch(/at most 300 rows .* may read 400/);
    }
    const byVariable = 'query($n: Int, $i: [String]) { records(limit: $n, include: $i) }';
    expect(await executor.run({ query: byVariable, variables: { n: 100 } }, {})).toEqual({ data: { records: 1 } });
    expect((await executor.run({ query: byVariable, variables: { n: 200, i: ['x'] } }, {})).errors?.[0].message).toMatch(/may read 400/);
    expect(await executor.run({ query: byVariable, variables: { n: 150, i: ['x'] } }, {})).toEqual({ data: { records: 1 } });
  });

  it('validates its limits at start, naming the variable', () => {
    expect(() => loadConfig({ SVC_GRAPHQL_MAX_ROOT_FIELDS: '0' })).toThrow(/SVC_GRAPHQL_MAX_ROOT_FIELDS/);
    expect(() => loadConfig({ SVC_GRAPHQL_TIMEOUT_MS: 'soon' })).toThrow(/SVC_GRAPHQL_TIMEOUT_MS/);
  });
});
