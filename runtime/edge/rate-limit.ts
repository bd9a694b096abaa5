/**
 * Per-IP rate limit (specification, Limits): a token bucket in memory per
 * client, RATE_LIMIT_RPS requests per RATE_LIMIT_WINDOW_SECS. /auth/*,
 * /health and /ready are exempt (logins have their own per-account throttle).
 * Over the limit: 429, `Retry-After`, `{error:'rate_limited', retryAfter}`.
 */
import type Koa from 'koa';
import type { Config } from '../config/index.ts';
import { HttpError } from '../http/errors.ts';
import { TokenBuckets } from './buckets.ts';

export interface RateLimitOptions {
  readonly requests: number;
  readonly windowSecs: number;
  readonly trustForwardedFor: boolean;
  readonly maxClients?: number;
}

export function isExempt(path: string): boolean {
  return path === '/health' || path === '/ready' || path === '/auth' || path.startsWith('/auth/');
}

/**
 * The first hop of X-Forwarded-For (the client as the outermost proxy saw
 * it) unless SVC_TRUST_X_FORWARDED_FOR=false, then the peer address. Without
 * a proxy in front, clients can forge the header: operators turn trust off.
 */
export function clientAddress(ctx: Koa.Context, trustForwardedFor: boolean): string {
  if (trustForwardedFor) {
    const forwarded = ctx.get('x-forwarded-for');
    const first = forwarded === '' ? '' : forwarded.split(',')[0].trim();
    if (first !== '') return normalizedAddress(first);
  }
  return peerAddress(ctx.req.socket);
}

/** The socket's peer, normalised once per connection (keep-alive connections carry many requests). */
const peers = new WeakMap<object, string>();

function peerAddress(socket: { remoteAddress?: string }): string {
  let address = peers.get(socket);
  if (address === undefined) {
    address = normalizedAddress(socket.remoteAddress || 'unknown');
    peers.set(socket, address);
  }
  return address;
}

// Bounded: a key is kept in memory per client.
const normalizedAddress = (address: string): string => address.replace(/^::ffff:(?=\d+\.)/, '').slice(0, 64).toLowerCase();

export function rateLimit(options: RateLimitOptions): Koa.Middleware {
  const buckets = new TokenBuckets({ capacity: options.requests, windowSecs: options.windowSecs, maxEntries: options.maxClients });
  // Not async: the request's promise is next()'s own (no extra promise and ticks per request).
  return function rateLimit(ctx, next) {
    if (isExempt(ctx.path)) return next();
    const verdict = buckets.take(clientAddress(ctx, options.trustForwardedFor));
    if (!verdict.allowed) {
      const retryAfter = verdict.retryAfterSecs;
      return Promise.reject(new HttpError(429, 'rate_limited', { retryAfter }, { 'Retry-After': String(retryAfter) }));
    }
    return next();
  };
}

export const rateLimitEdge = (config: Config): Koa.Middleware => rateLimit(config.rateLimit);
