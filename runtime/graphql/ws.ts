/**
 * Subscriptions over `/graphql/ws` with the graphql-ws protocol. The
 * connection is authenticated in `connection_init`: `connectionParams.token`
 * or `connectionParams.authorization: 'Bearer …'`, and optionally a tenant
 * (`tenantId` or `X-Tenant-ID`, with the same rule as the header). Without a
 * valid token, or naming a tenant the user may not act in, the server closes
 * the socket with 4403 Forbidden; when the session cannot be checked (database
 * unreachable), with 1013 (try again later).
 *
 * A socket follows its session (auth/watch.ts): closed with 4001 on logout,
 * revocation, a disabled user, a tenant change or token expiry; a role change
 * applies to the next change delivered. One socket holds at most
 * SVC_GRAPHQL_MAX_SUBSCRIPTIONS subscriptions.
 */
import {
  execute, GraphQLError, Kind, parse, subscribe, validate, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode,
} from 'graphql';
import type { GraphqlOperationType } from '../metrics/index.ts';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { bearerToken, InvalidTokenError, watchSessions, type Authenticator, type Principal, type WatchedConnection } from '../auth/index.ts';
import type { Logger } from '../log/index.ts';
import type { Caller } from '../records/index.ts';
import { isPlainObject } from '../records/values.ts';
import type { ServiceContext } from '../core/index.ts';
import { resolveScope, type TenantScope } from '../tenancy/index.ts';
import { MAX_TOKENS } from './cost.ts';
import { formatErrors } from './errors.ts';

/** WebSocket close code 1013 (RFC 6455 registry): the server cannot serve now, retry later. */
const TRY_AGAIN_LATER = 1013;

function tokenOf(params: Record<string, unknown>): string | null {
  if (typeof params.token === 'string' && params.token) return params.token;
  const header = params.authorization ?? params.Authorization;
  return typeof header === 'string' ? bearerToken(header) : null;
}

function tenantOf(params: Record<string, unknown>): string | null {
  const value = params.tenantId ?? params['X-Tenant-ID'] ?? params['x-tenant-id'];
  return typeof value === 'string' ? value : null;
}

interface Admitted {
  readonly token: string;
  readonly principal: Principal;
  readonly scope: TenantScope;
}

async function authenticate(auth: Authenticator, params: unknown): Promise<Admitted | 'unavailable' | null> {
  if (!isPlainObject(params)) return null;
  const token = tokenOf(params);
  if (!token) return null;
  let principal: Principal;
  try {
    principal = await auth.authenticate(token);
  } catch (error) {
    if (error instanceof InvalidTokenError) return null;
    // The session could not be checked (database unreachable): not the client's fault, so not 4403.
    return 'unavailable';
  }
  try {
    return { token, principal, scope: resolveScope(principal, tenantOf(params)) };
  } catch {
    return null; // a tenant the user may not act in: refused like a bad token
  }
}

/** The caller of a socket's subscriptions: its principal is read at each delivery, so a new role applies at once. */
function callerOf(connection: WatchedConnection, scope: TenantScope): Caller {
  return {
    get principal() {
      return connection.principal;
    },
    scope,
  };
}

function operationType(document: DocumentNode, name: string | null | undefined): GraphqlOperationType {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const op = name ? operations.find((o) => o.name?.value === name) : operations.length === 1 ? operations[0] : undefined;
  return op?.operation ?? 'unknown';
}

export async function mountSubscriptions(ctx: ServiceContext<'auth' | 'metrics'>, schema: GraphQLSchema, log: Logger) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: ctx.config.maxBodyBytes });
  const callers = new WeakMap<object, Caller>();
  const sessions = await watchSessions(ctx.notifier, ctx.services.auth, log);
  const maxSubscriptions = ctx.config.graphql.maxSubscriptionsPerSocket;
  const server = useServer<Record<string, unknown>>({
    schema,
    onConnect: async (c) => {
      const admitted = await authenticate(ctx.services.auth, c.connectionParams);
      const socket = c.extra.socket;
      if (admitted === 'unavailable') socket.close(TRY_AGAIN_LATER, 'service temporarily unavailable');
      if (admitted === null || admitted === 'unavailable') return false;
      const connection: WatchedConnection = {
        token: admitted.token, principal: admitted.principal, close: (code, reason) => socket.close(code, reason),
      };
      const unwatch = sessions.add(connection);
      socket.once('close', unwatch);
      callers.set(socket, callerOf(connection, admitted.scope));
      return true;
    },
    // Parse, validate and run with this module's graphql (graphql-ws may resolve another copy of it).
    onSubscribe: (c, _id, payload) => {
      const metrics = ctx.services.metrics;
      let document;
      try {
        document = parse(payload.query, { maxTokens: MAX_TOKENS });
      } catch (error) {
        metrics.observeGraphql('unknown', 'invalid', null);
        return [error instanceof GraphQLError ? error : new GraphQLError('the document could not be parsed')];
      }
      const errors = validate(schema, document);
      if (errors.length > 0) {
        metrics.observeGraphql('unknown', 'invalid', null);
        return errors;
      }
      metrics.observeGraphql(operationType(document, payload.operationName), 'success', null);
      // The subscription being started is already among c.subscriptions. It is refused when run (below):
      // errors returned from here must be instances of graphql-ws' own copy of graphql.
      const refused = Object.keys(c.subscriptions).length > maxSubscriptions;
      const contextValue = { caller: callers.get(c.extra.socket), refused };
      return { schema, document, variableValues: payload.variables, operationName: payload.operationName, contextValue };
    },
    execute: (args) => execute(args),
    subscribe: (args) => ((args.contextValue as { refused?: boolean }).refused
      ? { errors: [new GraphQLError(`at most ${maxSubscriptions} subscriptions per connection`)] }
      : subscribe(args)),
    onNext: (_c, _id, _payload, _args, result) =>
      result.errors ? { ...result, errors: result.errors.flatMap((e) => formatErrors(e, log)) } : undefined,
    onError: (_c, _id, _payload, errors) => errors.flatMap((e) => formatErrors(e, log)),
  }, wss);
  ctx.onUpgrade('/graphql/ws', (request, socket, head) => {
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  });
  return {
    async stop() {
      await sessions.stop();
      await server.dispose();
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((done) => wss.close(() => done()));
    },
  };
}
