/**
 * The built console's files, read once at start: the page (index.html) and
 * the hashed assets with their precompressed siblings (`.br`, `.gz`) written
 * by the build (console/build.mjs). Only files under assets/ are served as
 * assets: a path never reaches the file system.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

export interface ConsoleAsset {
  readonly type: string;
  readonly raw: Buffer;
  readonly gzip: Buffer | null;
  readonly br: Buffer | null;
}

export interface ConsoleAssets {
  readonly page: Buffer;
  /** The asset at `path` (`/console/assets/<name>`), or undefined. */
  asset(path: string): ConsoleAsset | undefined;
}

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
};

export function loadAssets(dir: string): ConsoleAssets {
  const files = new Map<string, ConsoleAsset>();
  const assetsDir = join(dir, 'assets');
  const names = existsSync(assetsDir) ? readdirSync(assetsDir) : [];
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (!type) continue;
    const sibling = (suffix: string) => (names.includes(name + suffix) ? readFileSync(join(assetsDir, name + suffix)) : null);
    files.set(`/console/assets/${name}`, { type, raw: readFileSync(join(assetsDir, name)), gzip: sibling('.gz'), br: sibling('.br') });
  }
  return { page: readFileSync(join(dir, 'index.html')), asset: (path) => files.get(path) };
}
