/**
 * GraphQL over HTTP (the GraphQL-over-HTTP draft; CONTRACT section 15).
 *
 * - `POST /graphql` with a JSON body (another content type is 415);
 *   `GET /graphql?query=&variables=&operationName=` runs queries only: a
 *   mutation over GET is 405 with `Allow: POST`, and nothing runs.
 * - A GET with no `query` whose Accept prefers `text/html` (a browser) gets the
 *   IDE, outside production.
 * - Answers are `application/json`, or `application/graphql-response+json`
 *   when the client prefers it; an Accept that allows neither is 406.
 * - Every answer has the GraphQL shape `{data?, errors?}`: without valid
 *   authentication 401 (`UNAUTHORIZED`, with `WWW-Authenticate: Bearer`), a
 *   tenant the caller may not act in 403 (`FORBIDDEN`; CONTRACT section 8), a
 *   malformed request or a document that cannot run 400 (no `data`), and 200
 *   once execution started (field errors sit beside `data`). Both media types
 *   use the same statuses, which the draft allows for `application/json` and
 *   requires for `application/graphql-response+json`.
 */
import type Koa from 'koa';
import type { ExecutionResult, GraphQLError, GraphQLFormattedError } from 'graphql';
import { principalOf, type Authenticator, type Principal } from '../auth/index.ts';
import { SafeError, UNAVAILABLE_RETRY_SECS } from '../http/errors.ts';
import type { Logger } from '../log/index.ts';
import { AccessDenied, type Caller } from '../records/index.ts';
import { formatErrors, isUnavailableError, requestError } from './errors.ts';
import type { Executor, GraphQLRequest } from './execute.ts';
import { isPlainObject } from '../records/values.ts';
import { findNul } from '../http/input.ts';
import { isJsonRequest } from '../http/body.ts';
import { requestScope } from '../tenancy/index.ts';
import { tenantOfRequest, userActor, type AuditAction, type AuditLog } from '../audit/index.ts';

export const GRAPHQL_RESPONSE = 'application/graphql-response+json';
const JSON_TYPE = 'application/json';

type Invalid = { readonly field?: string; readonly message: string };

/** A request error in the GraphQL shape, answered before anything runs. */
class Refusal {
  constructor(
    readonly status: number,
    readonly body: { errors: GraphQLFormattedError[] },
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

const invalidRequest = (problem: Invalid) => new Refusal(400, requestError('VALIDATION_ERROR', problem.message, problem.field));

function checkRequest(query: unknown, variables: unknown, operationName: unknown): GraphQLRequest {
  if (typeof query !== 'string' || query.trim() === '') throw invalidRequest({ field: 'query', message: 'query must be a non-empty string' });
  if (variables !== undefined && variables !== null && !isPlainObject(variables)) {
    throw invalidRequest({ field: 'variables', message: 'variables must be an object' });
  }
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    throw invalidRequest({ field: 'operationName', message: 'operationName must be a string' });
  }
  const nul = findNul({ query, variables, operationName }, '');
  if (nul !== null) throw invalidRequest({ field: nul, message: `${nul} must not contain NUL characters (U+0000)` });
  return { query, variables: variables as Record<string, unknown> | null | undefined, operationName: operationName as string | null | undefined };
}

function readPost(koa: Koa.Context): GraphQLRequest {
  if (!isJsonRequest(koa)) {
    throw new Refusal(415, requestError('VALIDATION_ERROR', 'the request body must be application/json'), { Accept: JSON_TYPE });
  }
  const body: unknown = koa.request.body;
  if (!isPlainObject(body)) throw invalidRequest({ message: 'the request body must be a JSON object' });
  return checkRequest(body.query, body.variables, body.operationName);
}

/** One value of a query-string parameter: a repeated parameter is ambiguous. */
function param(koa: Koa.Context, name: string): string | undefined {
  const value = koa.query[name];
  if (Array.isArray(value)) throw invalidRequest({ field: name, message: `${name} is given more than once` });
  return value;
}

function readGet(koa: Koa.Context): GraphQLRequest {
  const text = param(koa, 'variables');
  let variables: unknown = null;
  if (text !== undefined && text !== '') {
    try {
      variables = JSON.parse(text);
    } catch {
      throw invalidRequest({ field: 'variables', message: 'variables must be a JSON-encoded object' });
    }
  }
  return checkRequest(param(koa, 'query'), variables, param(koa, 'operationName') || null);
}

/** The media type of the answer; null when the client accepts none of ours. */
function responseType(koa: Koa.Context): string | null {
  // No Accept: a legacy client, answered as it always was (the draft's advice).
  if (!koa.get('accept')) return JSON_TYPE;
  // application/json first: `*/*` gets it; an explicit preference picks the other.
  return koa.accepts(JSON_TYPE, GRAPHQL_RESPONSE) || null;
}

/** A browser asking for a page: `text/html` is its first choice, not reached through a wildcard. */
export function wantsHtml(koa: Koa.Context): boolean {
  return koa.accepts()[0] === 'text/html';
}

/** The caller, or a Refusal: 401 for a missing or refused token, 503 when the session cannot be checked. */
async function authenticate(koa: Koa.Context, auth: Authenticator, audit: AuditLog): Promise<Principal> {
  try {
    return await principalOf(koa, auth);
  } catch (error) {
    if (!(error instanceof SafeError)) throw error;
    if (error.status === 401) {
      await audit.denied({
        action: 'access.denied', tenantId: tenantOfRequest(koa), actor: userActor(undefined),
        changes: { method: koa.method, path: koa.path, status: 401 }, request: audit.requestOf(koa),
      });
    }
    const code = error.status === 401 ? 'UNAUTHORIZED' : 'INTERNAL_ERROR';
    const headers = error.status === 401 ? { ...error.headers, 'WWW-Authenticate': 'Bearer' } : error.headers;
    throw new Refusal(error.status, requestError(code, error.message), headers);
  }
}

/** The caller a worker's write-back acts as; its refusals answer in the GraphQL shape. */
async function workerOf(koa: Koa.Context, resolve: (koa: Koa.Context) => Promise<Caller>): Promise<Caller> {
  try {
    return await resolve(koa);
  } catch (error) {
    if (!(error instanceof SafeError)) throw error;
    throw new Refusal(error.status, { errors: [{ message: error.message, extensions: { code: error.code } }] }, error.headers);
  }
}

async function callerOf(koa: Koa.Context, principal: Principal, audit: AuditLog): Promise<Caller> {
  try {
    return { principal, scope: requestScope(koa, principal), request: audit.requestOf(koa) };
  } catch (error) {
    if (!(error instanceof SafeError) || error.status !== 403) throw error;
    await auditForbidden(koa, audit, []);
    throw new Refusal(403, requestError('FORBIDDEN', 'tenant not allowed'));
  }
}

/** The JSON text of `body`, or a small error when it is larger than the response-size limit. */
function bounded(body: object, maxBytes: number): string {
  const text = JSON.stringify(body);
  if (text.length <= maxBytes / 3 || Buffer.byteLength(text) <= maxBytes) return text;
  return JSON.stringify(requestError('VALIDATION_ERROR', `the response would exceed ${maxBytes} bytes: ask for fewer rows or fields`));
}

/** The audit action of a refused records mutation, by root field; other refusals are `access.denied`. */
const RECORD_ACTIONS: Readonly<Record<string, AuditAction>> = {
  create: 'record.create', update: 'record.update', updateMany: 'record.update',
  delete: 'record.delete', restore: 'record.restore', hardDelete: 'record.hardDelete',
};

/** What a FORBIDDEN error says was attempted: the action, the model when a model was refused, and the root field. */
interface Attempt {
  readonly action: AuditAction;
  readonly entityType: string | null;
  readonly field: string;
}

function attemptOf(error: GraphQLError): Attempt {
  // The field's own name (not its alias): `nodes` hold the field as the document wrote it.
  const field = error.nodes?.[0]?.kind === 'Field' ? error.nodes[0].name.value : String(error.path?.[0] ?? '');
  const refused = error.originalError instanceof AccessDenied ? error.originalError : null;
  if (!refused) return { action: 'access.denied', entityType: null, field };
  return { action: (refused.operation !== 'read' && RECORD_ACTIONS[field]) || 'access.denied', entityType: refused.model, field };
}

/**
 * FORBIDDEN answers are denied attempts: one entry per attempted action and
 * model (`record.create` of `Company`), naming the root fields refused.
 */
async function auditForbidden(koa: Koa.Context, audit: AuditLog, attempts: readonly Attempt[]): Promise<void> {
  const groups = new Map<string, { attempt: Attempt; fields: string[] }>();
  for (const attempt of attempts) {
    const key = `${attempt.action}\u0000${attempt.entityType ?? ''}`;
    const group = groups.get(key) ?? { attempt, fields: [] };
    group.fields.push(attempt.field);
    groups.set(key, group);
  }
  if (groups.size === 0) groups.set('', { attempt: { action: 'access.denied', entityType: null, field: '' }, fields: [] });
  for (const { attempt, fields } of groups.values()) {
    await audit.denied({
      action: attempt.action, entityType: attempt.entityType, tenantId: tenantOfRequest(koa), actor: userActor(koa.state.principal),
      changes: { method: koa.method, path: koa.path, graphql: fields }, request: audit.requestOf(koa),
    });
  }
}

/** No root field has a value (`data` null, or every field null). */
const nothingAnswered = (data: ExecutionResult['data']): boolean => data == null || Object.values(data).every((v) => v === null);

/** GET, or the HEAD the router derives from it. */
const isGet = (koa: Koa.Context) => koa.method === 'GET' || koa.method === 'HEAD';

export interface GraphqlHttpOptions {
  /** The authenticator, read per request: the auth capability may replace it. */
  readonly auth: Authenticator;
  readonly executor: Executor;
  readonly log: Logger;
  readonly maxResponseBytes: number;
  readonly audit: AuditLog;
  /** Serves the IDE to a browser's GET without `query`; absent in production. */
  readonly ide?: Koa.Middleware;
  /** A request with X-Worker-Token: an action worker's write-back (runtime/actions), when that capability runs. */
  readonly workerCaller?: (koa: Koa.Context) => Promise<Caller>;
}

export function graphqlHandler(options: GraphqlHttpOptions): Koa.Middleware {
  const { executor, log, maxResponseBytes } = options;

  async function answer(koa: Koa.Context): Promise<ExecutionResult> {
    const worker = koa.get('x-worker-token') ? options.workerCaller : undefined;
    const principal = worker ? null : await authenticate(koa, options.auth, options.audit);
    const request = isGet(koa) ? readGet(koa) : readPost(koa);
    const caller = worker ? await workerOf(koa, worker) : await callerOf(koa, principal!, options.audit);
    if (isGet(koa) && executor.operationOf(request) === 'mutation') {
      throw new Refusal(405, requestError('VALIDATION_ERROR', 'a mutation must be sent with POST'), { Allow: 'POST' });
    }
    return executor.run(request, { caller });
  }

  return async function graphqlOverHttp(koa, next) {
    if (isGet(koa) && options.ide && koa.query.query === undefined && wantsHtml(koa)) return options.ide(koa, next);
    const type = responseType(koa);
    koa.type = `${type ?? JSON_TYPE}; charset=utf-8`;
    koa.vary('Accept');
    if (!type) {
      koa.status = 406;
      koa.body = requestError('VALIDATION_ERROR', `Accept must allow ${JSON_TYPE} or ${GRAPHQL_RESPONSE}`);
      return;
    }
    let result: ExecutionResult;
    try {
      result = await answer(koa);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      koa.status = error.status;
      koa.set(error.headers);
      koa.body = error.body;
      return;
    }
    if (!result.errors) {
      koa.body = bounded({ data: result.data }, maxResponseBytes);
      return;
    }
    // No `data`: the request never started executing (invalid document, variables or operation).
    if (result.data === undefined) koa.status = 400;
    // Nothing answered because the database cannot take the work now: 503, as before execution (CONTRACT section 15).
    else if (nothingAnswered(result.data) && result.errors.every(isUnavailableError)) {
      koa.status = 503;
      koa.set('Retry-After', String(UNAVAILABLE_RETRY_SECS));
    }
    const requestLog = log.child({ requestId: koa.state.requestId });
    const errors = result.errors.flatMap((e) => formatErrors(e, requestLog));
    const forbidden = result.errors.filter((e) => e.extensions?.code === 'FORBIDDEN' || (e.originalError instanceof SafeError && e.originalError.code === 'FORBIDDEN'));
    if (forbidden.length > 0) await auditForbidden(koa, options.audit, forbidden.map(attemptOf));
    koa.body = bounded({ ...(result.data === undefined ? {} : { data: result.data }), errors }, maxResponseBytes);
  };
}
