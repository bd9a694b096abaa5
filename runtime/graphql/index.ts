/**
 * The graphql capability: GraphQL over HTTP at `POST /graphql` and
 * `GET /graphql` (operations of CONTRACT section 4 over the records service;
 * http.ts), the IDE for browsers at `GET /graphql` and `GET /playground`
 * outside production, and subscriptions at `/graphql/ws`.
 */
import { defineCapability } from '../core/index.ts';
import { Executor } from './execute.ts';
import { createModelChanges } from './feed.ts';
import { graphqlHandler } from './http.ts';
import { mountIde } from './ide.ts';
import { createSchema } from './schema.ts';
import { mountSubscriptions } from './ws.ts';

export const graphql = defineCapability({
  name: 'graphql',
  provides: [],
  requires: ['feed', 'records', 'streams', 'jobs', 'metrics', 'auth', 'audit', 'actions'],
  async init(ctx) {
    const { auth, audit, jobs, metrics, actions } = ctx.services;
    const feed = createModelChanges(ctx.services.feed, ctx.ir, ctx.access);
    const schema = createSchema({
      records: ctx.services.records,
      feed,
      streams: ctx.services.streams,
      jobs,
    });
    // graphql-jit is loaded only when chosen: it costs ~140 ms of CPU at start.
    const compileJit = ctx.config.graphql.executor === 'jit' ? (await import('./jit.ts')).compileOperation : undefined;
    const executor = new Executor(schema, ctx.config.graphql, (type, outcome, seconds) => metrics.observeGraphql(type, outcome, seconds), compileJit);
    const handler = graphqlHandler({
      auth,
      executor,
      log: ctx.log,
      maxResponseBytes: ctx.config.graphql.maxResponseBytes,
      audit,
      // The IDE is a development tool (specification: GET /graphql "IDE (development)").
      ide: ctx.config.env === 'production' ? undefined : mountIde(ctx.router),
      // A worker's write-back (X-Worker-Token) is resolved by the actions capability.
      workerCaller: actions.workerCaller,
    });
    ctx.router.post('/graphql', handler);
    ctx.router.get('/graphql', handler);
    const subscriptions = await mountSubscriptions(ctx, schema, ctx.log);
    return {
      async stop() {
        await subscriptions.stop();
      },
    };
  },
});

export { Executor } from './execute.ts';
export { TYPE_DEFS } from './sdl.ts';
