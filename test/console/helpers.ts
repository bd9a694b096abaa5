/**
 * The console's tests need dist/console built from the current sources: it
 * is rebuilt (console/build.mjs, a few seconds) when the sources' hash
 * differs from the one stamped beside the last build, into a fresh folder
 * renamed into place, so that two test files starting together never serve
 * a half-written build.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/service.ts';

const SOURCES = join(REPO_ROOT, 'console');
export const CONSOLE_DIST = join(REPO_ROOT, 'dist', 'console');
const STAMP = '.sources';

function addSources(dir: string, hash: ReturnType<typeof createHash>): void {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) addSources(path, hash);
    else hash.update(`${path}\n`).update(readFileSync(path));
  }
}

function hashSources(dir: string): string {
  const hash = createHash('sha256');
  addSources(dir, hash);
  return hash.digest('hex');
}

export function ensureConsoleBuilt(): void {
  const wanted = hashSources(SOURCES);
  const stamp = join(CONSOLE_DIST, STAMP);
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted) return;
  const fresh = `${CONSOLE_DIST}.build-${process.pid}`;
  const built = spawnSync(process.execPath, [join(SOURCES, 'build.mjs'), fresh], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.status !== 0) throw new Error(`console build failed (exit ${built.status})`);
  writeFileSync(join(fresh, STAMP), wanted);
  const old = `${CONSOLE_DIST}.old-${process.pid}`;
  if (existsSync(CONSOLE_DIST)) renameSync(CONSOLE_DIST, old);
  try {
    renameSync(fresh, CONSOLE_DIST);
  } catch {
    rmSync(fresh, { recursive: true, force: true }); // another test file won the race with the same sources
  }
  rmSync(old, { recursive: true, force: true });
}
