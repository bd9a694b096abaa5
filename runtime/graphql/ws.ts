/**
 * Subscriptions over `/graphql/ws` with the graphql-ws protocol. The
 * connection is authenticated in `connection_init`: `connectionParams.token`
 * or `connectionParams.authorization: 'Bearer …'`, and optionally a tenant
 * (`tenantId` or `X-Tenant-ID`, with the same rule as the header). Without a
 * valid token the server closes the socket with 4403 Forbidden.
 */
import { execute, parse, subscribe, validate, type GraphQLError, type GraphQLSchema } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { WebSocketServer } from 'ws';
import { bearerToken, resolveTenant, type Authenticator } from '../auth/index.ts';
import type { Logger } from '../log/index.ts';
import type { Caller } from '../records/index.ts';
import { isPlainObject } from '../records/values.ts';
import type { ServiceContext } from '../service/types.ts';
import { formatError } from './errors.ts';

function tokenOf(params: Record<string, unknown>): string | null {
  if (typeof params.token === 'string' && params.token) return params.token;
  const header = params.authorization ?? params.Authorization;
  return typeof header === 'string' ? bearerToken(header) : null;
}

function tenantOf(params: Record<string, unknown>): string | null {
  const value = params.tenantId ?? params['X-Tenant-ID'] ?? params['x-tenant-id'];
  return typeof value === 'string' ? value : null;
}

async function authenticate(auth: Authenticator, params: unknown): Promise<Caller | null> {
  if (!isPlainObject(params)) return null;
  const token = tokenOf(params);
  if (!token) return null;
  try {
    const principal = await auth.authenticate(token);
    return { principal, tenantId: resolveTenant(principal, tenantOf(params)) };
  } catch {
    return null; // bad token or a tenant the user may not use: refused alike
  }
}

export function mountSubscriptions(ctx: ServiceContext, schema: GraphQLSchema, log: Logger) {
  const wss = new WebSocketServer({ noServer: true, maxPayload: ctx.config.maxBodyBytes });
  const callers = new WeakMap<object, Caller>();
  const server = useServer<Record<string, unknown>>({
    schema,
    onConnect: async (c) => {
      const caller = await authenticate(ctx.services.auth, c.connectionParams);
      if (!caller) return false;
      callers.set(c.extra.socket, caller);
      return true;
    },
    // Parse, validate and run with this module's graphql (graphql-ws may resolve another copy of it).
    onSubscribe: (c, _id, payload) => {
      let document;
      try {
        document = parse(payload.query);
      } catch (error) {
        return [error as GraphQLError];
      }
      const errors = validate(schema, document);
      if (errors.length > 0) return errors;
      return { schema, document, variableValues: payload.variables, operationName: payload.operationName, contextValue: { caller: callers.get(c.extra.socket) } };
    },
    execute: (args) => execute(args),
    subscribe: (args) => subscribe(args),
    onNext: (_c, _id, _payload, _args, result) =>
      result.errors ? { ...result, errors: result.errors.map((e) => formatError(e, log)) } : undefined,
    onError: (_c, _id, _payload, errors) => errors.map((e) => formatError(e, log)),
  }, wss);
  ctx.onUpgrade('/graphql/ws', (request, socket, head) => {
    wss.handleUpgrade(request, socket, head, (ws) => wss.emit('connection', ws, request));
  });
  return {
    async stop() {
      await server.dispose();
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((done) => wss.close(() => done()));
    },
  };
}
