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

/** Null when same-origin only: no middleware at all (browsers then refuse cross-origin reads). */
export function corsPolicy(origins: readonly string[] | null): Koa.Middleware | null {
  if (origins === null || origins.length === 0) return null;
  const any = origins.includes('*');
  const allowed = new Set(origins.map((origin) => origin.replace(/\/+$/, '')));
  return cors({
    origin: any ? '*' : (ctx) => (allowed.has(ctx.get('origin')) ? ctx.get('origin') : ''),
    exposeHeaders: EXPOSED,
    maxAge: 600,
  });
}

export const corsEdge = (config: Config): Koa.Middleware | null => corsPolicy(config.corsOrigins);
