/**
 * CORS per CORS_ORIGINS: omitted means same-origin only (no CORS headers at
 * all, so browsers refuse cross-origin reads); `*` allows any origin; otherwise
 * only the listed origins, compared exactly. Credentials are not allowed:
 * the API authenticates with bearer tokens, never cookies.
 */
import type Koa from 'koa';
import cors from '@koa/cors';
import type { Config } from '../config/index.ts';

const EXPOSED = ['Retry-After', 'X-Request-Id'];

export function corsPolicy(origins: readonly string[] | null): Koa.Middleware {
  if (origins === null || origins.length === 0) {
    return function sameOriginOnly(_ctx, next) {
      return next();
    };
  }
  const any = origins.includes('*');
  const allowed = new Set(origins.map((origin) => origin.replace(/\/+$/, '')));
  return cors({
    origin: any ? '*' : (ctx) => (allowed.has(ctx.get('origin')) ? ctx.get('origin') : ''),
    exposeHeaders: EXPOSED,
    maxAge: 600,
  });
}

export const corsEdge = (config: Config): Koa.Middleware => corsPolicy(config.corsOrigins);
