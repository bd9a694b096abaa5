/**
 * The refresh token of a browser session (CONTRACT section 16): a login that
 * asks for it (`{cookie: true}`) gets the refresh token in an HttpOnly,
 * SameSite=Strict cookie scoped to /auth (Secure outside loopback), and not
 * in its body, so no script ever reads it. A refresh without a token in the
 * body uses the cookie, and only when the request's `Origin` is this
 * service's own: a page of another origin cannot make the browser rotate it
 * (SameSite already keeps the cookie off cross-site requests; the Origin
 * check also refuses same-site pages of another port or subdomain). Logout
 * clears it.
 */
import type Koa from 'koa';
import { forbidden } from '../http/errors.ts';

export const REFRESH_COOKIE = 'svc_refresh';
const PATH = '/auth';
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

function attributes(koa: Koa.Context, maxAgeSecs: number): string {
  const secure = LOOPBACK.has(koa.hostname) ? '' : '; Secure';
  return `Path=${PATH}; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSecs}${secure}`;
}

/** Only letters, digits and `-_.~` in the value: refresh tokens are base64url. */
const TOKEN = /^[\w.~-]{1,512}$/;

export function setRefreshCookie(koa: Koa.Context, token: string, maxAgeSecs: number): void {
  if (!TOKEN.test(token)) throw new Error('refresh token is not cookie-safe');
  koa.append('Set-Cookie', `${REFRESH_COOKIE}=${token}; ${attributes(koa, maxAgeSecs)}`);
}

export function clearRefreshCookie(koa: Koa.Context): void {
  koa.append('Set-Cookie', `${REFRESH_COOKIE}=; ${attributes(koa, 0)}`);
}

/** The cookie's refresh token, once the request's Origin is checked; null when there is no cookie. */
export function refreshTokenFromCookie(koa: Koa.Context): string | null {
  const token = cookieValue(koa.get('cookie'), REFRESH_COOKIE);
  if (token === null) return null;
  // Koa 3's `koa.origin` is the request's Origin header: this service's own is built from protocol and Host.
  const own = `${koa.protocol}://${koa.host}`;
  const origin = koa.get('origin');
  if (origin === '' || origin !== own) throw forbidden('refresh by cookie needs the Origin of this service');
  return token;
}

function cookieValue(header: string, name: string): string | null {
  for (const pair of header.split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) {
      const value = pair.slice(at + 1).trim();
      return value === '' ? null : value;
    }
  }
  return null;
}
