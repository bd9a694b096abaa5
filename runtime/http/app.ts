/**
 * The Koa application and the HTTP edge shared by every capability: request id,
 * request log, JSON errors, JSON body parsing with a size limit, JSON 404.
 */
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import Router from '@koa/router';
import { safeErr, type Logger } from '../log/index.ts';
import { jsonBody } from './body.ts';
import { HttpError, invalidField, restBody, SafeError, unavailable } from './errors.ts';
import { isDatabaseUnavailable, unavailableMessage } from '../db/index.ts';

export interface AppOptions {
  readonly log: Logger;
  readonly maxBodyBytes: number;
  /** Edge middleware run before routing (CORS, rate limit ...), in order; null: not configured. */
  readonly edge?: readonly (Koa.Middleware | null)[];
  /** Told of every answered request (final status set); the list may grow after createApp. */
  readonly observers?: readonly RequestObserver[];
  /** Told of every error a request throws, before it is rendered; the list may grow after createApp. */
  readonly errorObservers?: readonly ErrorObserver[];
}

/** Sees a request once its response status is final; `seconds` is its latency. */
export type RequestObserver = (ctx: Koa.Context, seconds: number) => void;

/** Sees an error a request threw (the audit of denied attempts); awaited before the error is answered. */
export type ErrorObserver = (ctx: Koa.Context, error: unknown) => Promise<void>;

declare module 'koa' {
  interface DefaultState {
    requestId: string;
  }
}

export function createApp(options: AppOptions): { app: Koa; router: Router } {
  const app = new Koa({ proxy: false });
  const router = new Router();
  app.silent = true;
  app.use(edge(options.log, options.observers ?? [], options.errorObservers ?? []));
  for (const middleware of options.edge ?? []) if (middleware) app.use(middleware);
  app.use(urlWithoutNul);
  app.use(jsonBody({ maxBodyBytes: options.maxBodyBytes, nulCheckedBy: ['/graphql'] }));
  app.use(routesByFirstSegment(router));
  app.use(async function notFoundJson(ctx) {
    ctx.status = 404;
    ctx.body = NOT_FOUND;
  });
  return { app, router };
}

/**
 * The outermost middleware, one per request (one promise, not three): the
 * request id, the JSON body of every error and of the router's 405, and the
 * observers (metrics, the audit of denials).
 */
function edge(log: Logger, observers: readonly RequestObserver[], errorObservers: readonly ErrorObserver[]): Koa.Middleware {
  return async function edge(ctx, next) {
    const incoming = ctx.get('x-request-id');
    const requestId = incoming !== '' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
      // The router turns the 404 of a known path into 405 (with Allow); a handler's own 405 (a GraphQL mutation over GET) keeps its body.
      if (ctx.status === 405 && (ctx.body == null || ctx.body === NOT_FOUND)) ctx.body = METHOD_NOT_ALLOWED;
    } catch (error) {
      for (const observe of errorObservers) await observe(ctx, error);
      const { status, body, headers } = toResponse(error);
      if (status >= 500) log.error({ err: safeErr(error), requestId, path: ctx.path }, 'request failed');
      ctx.status = status;
      ctx.set(headers);
      ctx.body = body;
    } finally {
      const seconds = (performance.now() - started) / 1000;
      for (const observe of observers) observe(ctx, seconds);
      if (log.isLevelEnabled('debug')) {
        log.debug({ requestId, method: ctx.method, path: ctx.path, status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10 }, 'request');
      }
    }
  };
}

/**
 * A URL whose path or query spells U+0000 (`%00`) is a VALIDATION_ERROR before
 * any route runs: no store can hold it (runtime/http/input.ts), and a route
 * that passed a path parameter on would answer 500. One `includes` per request.
 */
async function urlWithoutNul(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  if (ctx.url.includes('%00')) {
    const [path] = ctx.url.split('?', 1);
    const holdsNul = (key: string) => key.includes('\u0000') || [ctx.query[key] ?? []].flat().some((value) => value.includes('\u0000'));
    const field = path.includes('%00') ? 'path' : Object.keys(ctx.query).find(holdsNul);
    throw invalidField(field ?? 'query', 'the URL holds a NUL character (%00)');
  }
  await next();
}

const REQUEST_ID = /^[\w.-]{1,128}$/;
const NOT_FOUND = Object.freeze({ error: 'not found', code: 'NOT_FOUND' });
const METHOD_NOT_ALLOWED = Object.freeze({ error: 'method not allowed', code: 'METHOD_NOT_ALLOWED' });

/**
 * The router's routes and its 405/501 answers, dispatched on the path's first
 * segment. @koa/router tests every route's pattern on every request (some
 * sixty in a service); here a request is matched only against the routes that
 * share its first segment, plus those whose first segment is not literal
 * (a parameter, or middleware on every path). The groups are built on first
 * use and again whenever routes were added since.
 */
function routesByFirstSegment(router: Router): Koa.Middleware {
  let built: { routes: number; groups: Map<string, Koa.Middleware>; other: Koa.Middleware } | null = null;
  return function routes(ctx, next) {
    if (built?.routes !== router.stack.length) built = { routes: router.stack.length, ...groupsOf(router) };
    return (built.groups.get(firstSegment(ctx.path)) ?? built.other)(ctx, next);
  };
}

/** Lower-cased: the router's patterns are case-insensitive (its default). */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return (end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase();
}

/** The literal first segment of a route's pattern, or null when any path may match it. */
function literalFirstSegment(layer: Router['stack'][number]): string | null {
  if (layer.methods.length === 0 || typeof layer.path !== 'string' || !layer.path.startsWith('/')) return null;
  const segment = firstSegment(layer.path);
  // `/` alone: the group of the empty first segment (requests for `/`), not of every path.
  if (layer.path === '/') return '';
  return segment === '' || /[^\w.~-]/.test(segment) ? null : segment;
}

function groupsOf(router: Router): { groups: Map<string, Koa.Middleware>; other: Koa.Middleware } {
  const keys = new Set<string>();
  for (const layer of router.stack) {
    const key = literalFirstSegment(layer);
    if (key !== null) keys.add(key);
  }
  const dispatcher = (key: string | null): Koa.Middleware => {
    const group = new Router();
    group.methods = router.methods;
    // The same layers, in the router's order: those of this segment and those of any.
    group.stack = router.stack.filter((layer) => {
      const own = literalFirstSegment(layer);
      return own === null || own === key;
    });
    const routes = group.routes() as Koa.Middleware;
    const allowed = group.allowedMethods() as Koa.Middleware;
    return (ctx, next) => routes(ctx, () => allowed(ctx, next));
  };
  return { groups: new Map([...keys].map((key) => [key, dispatcher(key)])), other: dispatcher(null) };
}

function toResponse(error: unknown): { status: number; body: object; headers: Record<string, string> } {
  if (error instanceof SafeError) return { status: error.status, body: restBody(error), headers: { ...error.headers } };
  // Errors from the body parser / Koa carry an expose-able status.
  const e = error as { status?: number; expose?: boolean; type?: string };
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    if (e.status === 413) return toResponse(new HttpError(413, 'request body too large'));
    if (e.type === 'entity.parse.failed' || e.status === 400) return toResponse(new HttpError(400, 'malformed JSON body'));
    return toResponse(new HttpError(e.status, e.expose ? (error as Error).message : 'bad request'));
  }
  // Postgres unreachable, restarting or out of connections: the client should retry, it is no bug.
  if (isDatabaseUnavailable(error)) return toResponse(unavailable(unavailableMessage(error)));
  return { status: 500, body: { error: 'internal error', code: 'INTERNAL_ERROR' }, headers: {} };
}
