/**
 * Loading the database layer does not load Node's fetch implementation
 * (undici): pg's load-time Cloudflare check would, at 35-45 ms of every cold
 * start (runtime/db/pg-promise.ts). Checked in a fresh process, where nothing
 * else has loaded it yet; and the `navigator` lent for the load is gone after it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('loading the database layer', () => {
  it('does not load undici, and leaves no navigator behind', async () => {
    const script = `
      const hadNavigator = 'navigator' in globalThis;
      const { openDatabase } = await import('./runtime/db/index.ts');
      const { default: pgp } = await import('./runtime/db/pg-promise.ts');
      console.log(JSON.stringify({
        undici: process.moduleLoadList.some((m) => m.includes('undici')),
        navigatorAfter: 'navigator' in globalThis, hadNavigator,
        loaded: typeof openDatabase === 'function' && typeof pgp === 'function' && typeof pgp().pg.Client === 'function',
      }));
    `;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd() });
    const seen = JSON.parse(stdout) as Record<string, boolean>;
    expect(seen.loaded).toBe(true);
    expect(seen.undici).toBe(false);
    expect(seen.navigatorAfter).toBe(seen.hadNavigator);
  }, 30_000);
});
