/**
 * Where this package lives, from the sources (a checkout) or from dist/ (an
 * installed package): the nearest folder above this file with a package.json.
 * Files shipped beside the code (templates/, bin/) are found from here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`svc-gen: no package.json above ${start}`);
  }
}

/** Absolute path of the package's folder. */
export const PACKAGE_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

const MANIFEST = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
};

/** The package's version (package.json). */
export const PACKAGE_VERSION: string = MANIFEST.version;

/** The version range of one of the package's own dependencies. */
export function dependencyRange(name: string): string {
  const range = MANIFEST.dependencies[name];
  if (!range) throw new Error(`svc-gen bug: ${name} is not a dependency of svc-gen`);
  return range;
}
