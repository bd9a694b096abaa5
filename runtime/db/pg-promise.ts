/**
 * pg-promise, loaded so that its pg does not load Node's fetch implementation.
 *
 * pg's `lib/stream.js` asks, as it loads, whether it runs on Cloudflare
 * Workers. Without a `navigator` global (Node 20 has none; Node 21 and later
 * do) it constructs a `Response`, and that first touch of the global loads
 * undici, Node's fetch: 35-45 ms of a cold start on this machine, for a
 * question whose answer under Node is always no. So, on a Node without one, a
 * `navigator` naming Node exists only while pg-promise and its pg load. The
 * load is one synchronous `require`: no other code runs while it is there.
 */
import { createRequire } from 'node:module';
import type PgPromise from 'pg-promise';

const require = createRequire(import.meta.url);

function load(): typeof PgPromise {
  if ('navigator' in globalThis) return require('pg-promise') as typeof PgPromise;
  Object.defineProperty(globalThis, 'navigator', {
    value: { userAgent: `Node.js/${process.versions.node}` }, configurable: true, writable: true, enumerable: false,
  });
  try {
    return require('pg-promise') as typeof PgPromise;
  } finally {
    delete (globalThis as { navigator?: unknown }).navigator;
  }
}

export default load();
