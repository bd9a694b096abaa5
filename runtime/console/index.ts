/**
 * The operator console (CONTRACT section 16, docs/adr/023-console.md): a
 * pre-built single-page app under dist/console, served at /console. Any
 * path under /console that is not an asset answers the app's page, so a deep
 * link such as /console/jobs?status=dead opens that view. Assets have
 * content-hashed names and are served precompressed (brotli, gzip) and
 * immutable; the page itself is never cached. Every answer carries the
 * console's Content-Security-Policy. SVC_CONSOLE=off mounts nothing (404).
 *
 * The console is a client of the public API: this capability serves files
 * only, and requires no other capability.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type Koa from 'koa';
import { defineCapability } from '../core/index.ts';
import { PACKAGE_ROOT } from '../package.ts';
import { loadAssets, type ConsoleAssets } from './assets.ts';

/** CONTRACT section 16, plus what the app needs of its own origin (styles, images of media, the realtime socket). */
export const CONSOLE_CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' blob:", "connect-src 'self'",
  "font-src 'self'", "manifest-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

export const CONSOLE_DIR = join(PACKAGE_ROOT, 'dist', 'console');

const HEADERS: Record<string, string> = {
  'Content-Security-Policy': CONSOLE_CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><h1>Console not built</h1><p>Run <code>npm run build</code> in the svc-gen package: it writes dist/console.</p></body></html>`;

export const operatorConsole = defineCapability({
  name: 'console',
  provides: [],
  requires: [],
  async init(ctx) {
    if (!ctx.config.console) return;
    const assets = existsSync(join(CONSOLE_DIR, 'index.html')) ? loadAssets(CONSOLE_DIR) : null;
    if (!assets) ctx.log.warn({ dir: CONSOLE_DIR }, 'console not built: /console answers a page that says so');
    const serve = serveConsole(assets);
    ctx.router.get('/console', serve);
    ctx.router.get('/console/{*rest}', serve);
  },
});

function serveConsole(assets: ConsoleAssets | null): Koa.Middleware {
  return async function serveConsole(koa) {
    koa.set(HEADERS);
    const asset = assets?.asset(koa.path);
    if (asset) {
      const encoding = koa.acceptsEncodings('br', 'gzip', 'identity');
      const body = (encoding === 'br' && asset.br) || (encoding === 'gzip' && asset.gzip) || null;
      koa.vary('Accept-Encoding');
      koa.set('Cache-Control', 'public, max-age=31536000, immutable');
      koa.type = asset.type;
      if (body) koa.set('Content-Encoding', encoding as string);
      koa.body = body ?? asset.raw;
      return;
    }
    if (koa.path.startsWith('/console/assets/')) {
      koa.status = 404;
      koa.type = 'text/plain; charset=utf-8';
      koa.body = 'not found';
      return;
    }
    koa.set('Cache-Control', 'no-cache');
    koa.type = 'text/html; charset=utf-8';
    koa.body = assets ? assets.page : NOT_BUILT;
  };
}
