/**
 * The graphql capability: `POST /graphql` (operations of CONTRACT section 4
 * over the records service), the IDE at `GET /graphql` and `GET /playground`,
 * and subscriptions at `/graphql/ws`.
 */
import type { Capability } from '../service/types.ts';
import { Executor } from './execute.ts';
import { createChangeFeed } from './feed.ts';
import { graphqlHandler } from './http.ts';
import { mountIde } from './ide.ts';
import { createSchema } from './schema.ts';
import { mountSubscriptions } from './ws.ts';

export const graphql: Capability = {
  name: 'graphql',
  async init(ctx) {
    const feed = await createChangeFeed(ctx.services.events, ctx.ir, ctx.access);
    const schema = createSchema({
      records: ctx.services.records,
      feed,
      jobs: () => ctx.services.jobs,
    });
    const executor = new Executor(schema);
    // The authenticator is read per request: the auth capability may replace it.
    ctx.router.post('/graphql', graphqlHandler(() => ctx.services.auth, executor, ctx.log));
    // The IDE is a development tool (specification: GET /graphql "IDE (development)").
    if (ctx.config.env !== 'production') mountIde(ctx.router);
    const subscriptions = mountSubscriptions(ctx, schema, ctx.log);
    return {
      async stop() {
        await subscriptions.stop();
        await feed.stop();
      },
    };
  },
};

export { Executor } from './execute.ts';
export { TYPE_DEFS } from './sdl.ts';
