/**
 * The Koa application and the HTTP edge shared by every capability: request id,
 * request log, JSON errors, JSON body parsing with a size limit, JSON 404.
 */
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import Router from '@koa/router';
import { safeErr, type Logger } from '../log/index.ts';
import { jsonBody } from './body.ts';
import { HttpError, restBody, SafeError } from './errors.ts';

export interface AppOptions {
  readonly log: Logger;
  readonly maxBodyBytes: number;
  /** Edge middleware run before routing (CORS, rate limit ...), in order. */
  readonly edge?: readonly Koa.Middleware[];
  /** Told of every answered request (final status set); the list may grow after createApp. */
  readonly observers?: readonly RequestObserver[];
}

/** Sees a request once its response status is final; `seconds` is its latency. */
export type RequestObserver = (ctx: Koa.Context, seconds: number) => void;

declare module 'koa' {
  interface DefaultState {
    requestId: string;
  }
}

export function createApp(options: AppOptions): { app: Koa; router: Router } {
  const app = new Koa({ proxy: false });
  const router = new Router();
  app.silent = true;
  app.use(requestContext(options.log, options.observers ?? []));
  app.use(errorBody(options.log));
  for (const middleware of options.edge ?? []) app.use(middleware);
  app.use(jsonBody({ maxBodyBytes: options.maxBodyBytes, nulCheckedBy: ['/graphql'] }));
  app.use(methodNotAllowedJson);
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.use(async function notFoundJson(ctx) {
    ctx.status = 404;
    ctx.body = { error: 'not found', code: 'NOT_FOUND' };
  });
  return { app, router };
}

async function methodNotAllowedJson(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  await next();
  // The router's 405 has no body; a handler's own 405 (a GraphQL mutation over GET) keeps its body.
  if (ctx.status === 405 && ctx.body == null) ctx.body = { error: 'method not allowed', code: 'METHOD_NOT_ALLOWED' };
}

function requestContext(log: Logger, observers: readonly RequestObserver[]): Koa.Middleware {
  return async function requestContext(ctx, next) {
    const incoming = ctx.get('x-request-id');
    const requestId = /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
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

function errorBody(log: Logger): Koa.Middleware {
  return async function errorBody(ctx, next) {
    try {
      await next();
    } catch (error) {
      const { status, body, headers } = toResponse(error);
      if (status >= 500) log.error({ err: safeErr(error), requestId: ctx.state.requestId, path: ctx.path }, 'request failed');
      ctx.status = status;
      ctx.set(headers);
      ctx.body = body;
    }
  };
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
  return { status: 500, body: { error: 'internal error', code: 'INTERNAL_ERROR' }, headers: {} };
}
