/**
 * The console's tests need dist/console built from the current sources: it
 * is rebuilt (console/build.mjs, a few seconds) when the sources' hash
 * differs from the one stamped beside the last build, by one test process
 * at a time, into a fresh folder renamed into place.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

const LOCK = `${CONSOLE_DIST}.lock`;
const STALE_LOCK_MS = 5 * 60_000;

/** One test process builds at a time (a mkdir lock): the others then find the stamp current and touch nothing. */
export function ensureConsoleBuilt(): void {
  const wanted = hashSources(SOURCES);
  const stamp = join(CONSOLE_DIST, STAMP);
  const current = () => existsSync(stamp) && readFileSync(stamp, 'utf8') === wanted;
  if (current()) return;
  lock();
  try {
    if (!current()) build(wanted);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

function lock(): void {
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch {
      const since = statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (Date.now() - since > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true }); // a test process killed while building
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200); // a synchronous pause while another process builds
    }
  }
}

function build(wanted: string): void {
  const fresh = `${CONSOLE_DIST}.build-${process.pid}`;
  const built = spawnSync(process.execPath, [join(SOURCES, 'build.mjs'), fresh], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (built.status !== 0) throw new Error(`console build failed (exit ${built.status})`);
  writeFileSync(join(fresh, STAMP), wanted);
  rmSync(CONSOLE_DIST, { recursive: true, force: true });
  renameSync(fresh, CONSOLE_DIST);
}
