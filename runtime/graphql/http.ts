/**
 * `POST /graphql`: a bearer JWT is required (401 `{error}` otherwise, from
 * principalOf); the caller's tenant comes from X-Tenant-ID (resolveTenant).
 * Execution errors answer 200 with `errors` (GraphQL over HTTP); a malformed
 * request or an invalid document answers 400 in the same shape.
 */
import type Koa from 'koa';
import type { ExecutionResult } from 'graphql';
import { principalOf, resolveTenant, type Authenticator } from '../auth/index.ts';
import { HttpError } from '../http/errors.ts';
import type { Logger } from '../log/index.ts';
import type { Caller } from '../records/index.ts';
import { formatError, requestError } from './errors.ts';
import type { Executor, GraphQLRequest } from './execute.ts';
import { isPlainObject } from '../records/values.ts';

function readRequest(body: unknown): GraphQLRequest | string {
  if (!isPlainObject(body)) return 'the request body must be a JSON object';
  const { query, variables, operationName } = body;
  if (typeof query !== 'string' || query.trim() === '') return 'query must be a non-empty string';
  if (variables !== undefined && variables !== null && !isPlainObject(variables)) return 'variables must be an object';
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return 'operationName must be a string';
  return { query, variables: variables as Record<string, unknown> | null | undefined, operationName: operationName as string | null | undefined };
}

function callerOf(koa: Koa.Context, principal: Awaited<ReturnType<typeof principalOf>>): Caller | null {
  try {
    return { principal, tenantId: resolveTenant(principal, koa.get('x-tenant-id')) };
  } catch (error) {
    if (error instanceof HttpError && error.status === 403) return null;
    throw error;
  }
}

export function graphqlHandler(auth: () => Authenticator, executor: Executor, log: Logger): Koa.Middleware {
  return async function graphqlPost(koa) {
    const principal = await principalOf(koa, auth());
    const request = readRequest(koa.request.body);
    if (typeof request === 'string') {
      koa.status = 400;
      koa.body = requestError('VALIDATION_ERROR', request);
      return;
    }
    const caller = callerOf(koa, principal);
    if (!caller) {
      koa.body = requestError('FORBIDDEN', 'tenant not allowed');
      return;
    }
    const result: ExecutionResult = await executor.run(request, { caller });
    if (result.errors) {
      if (result.data === undefined) koa.status = 400;
      koa.body = { ...(result.data === undefined ? {} : { data: result.data }), errors: result.errors.map((e) => formatError(e, log)) };
      return;
    }
    koa.body = { data: result.data };
  };
}
