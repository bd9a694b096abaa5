/**
 * The Koa application and the HTTP edge shared by every capability: request id,
 * request log, JSON errors, JSON body parsing with a size limit, JSON 404.
 */
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Logger } from '../log/index.ts';
import { HttpError } from './errors.ts';

export interface AppOptions {
  readonly log: Logger;
  readonly maxBodyBytes: number;
  /** Edge middleware run before routing (CORS, rate limit ...), in order. */
  readonly edge?: readonly Koa.Middleware[];
}

declare module 'koa' {
  interface DefaultState {
    requestId: string;
  }
}

export function createApp(options: AppOptions): { app: Koa; router: Router } {
  const app = new Koa({ proxy: false });
  const router = new Router();
  app.silent = true;
  app.use(requestContext(options.log));
  app.use(errorBody(options.log));
  for (const middleware of options.edge ?? []) app.use(middleware);
  app.use(jsonBody(options.maxBodyBytes));
  app.use(methodNotAllowedJson);
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.use(async function notFoundJson(ctx) {
    ctx.status = 404;
    ctx.body = { error: 'not found' };
  });
  return { app, router };
}

async function methodNotAllowedJson(ctx: Koa.Context, next: Koa.Next): Promise<void> {
  await next();
  if (ctx.status === 405) ctx.body = { error: 'method not allowed' };
}

function requestContext(log: Logger): Koa.Middleware {
  return async function requestContext(ctx, next) {
    const incoming = ctx.get('x-request-id');
    const requestId = /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
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
      if (status >= 500) log.error({ err: error, requestId: ctx.state.requestId, path: ctx.path }, 'request failed');
      ctx.status = status;
      ctx.set(headers);
      ctx.body = body;
    }
  };
}

function toResponse(error: unknown): { status: number; body: object; headers: Record<string, string> } {
  if (error instanceof HttpError) {
    return { status: error.status, body: { error: error.message, ...error.body }, headers: { ...error.headers } };
  }
  // Errors from the body parser / Koa carry an expose-able status.
  const e = error as { status?: number; expose?: boolean; type?: string };
  if (e && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
    if (e.status === 413) return { status: 413, body: { error: 'request body too large' }, headers: {} };
    if (e.type === 'entity.parse.failed' || e.status === 400) {
      return { status: 400, body: { error: 'malformed JSON body' }, headers: {} };
    }
    return { status: e.status, body: { error: e.expose ? (error as Error).message : 'bad request' }, headers: {} };
  }
  return { status: 500, body: { error: 'internal error' }, headers: {} };
}

function jsonBody(maxBodyBytes: number): Koa.Middleware {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: maxBodyBytes, encoding: 'utf-8' });
  return async function jsonBody(ctx, next) {
    const length = Number(ctx.get('content-length') || 0);
    if (length > maxBodyBytes) throw new HttpError(413, 'request body too large');
    return parse(ctx, next);
  };
}
