/**
 * `npm run bench:start`: cold start of `svc-gen start DIR` on an up-to-date
 * database, as an operator restarting a server sees it: from spawning the
 * process to the first 200 of GET /ready. The fixture (BENCH_FIXTURE, default
 * crm) is built and migrated once; then BENCH_STARTS (default 10) starts,
 * each stopped with SIGTERM before the next. Prints min, median and max of
 * the wall time, and of the CPU time the server process used until ready
 * (user + system, from /proc: less sensitive to a shared machine's load).
 * BENCH_BIN measures another checkout's svc-gen with the same project.
 *
 * Two ways of running: `checkout` (this repository's bin, which runs the
 * TypeScript sources through tsx) and `installed` (the compiled dist/, as an
 * installed package runs it: needs `npm run build` first; the bench lays out
 * bin/, dist/ and package.json in a temporary folder as `npm install` would).
 * BENCH_START_MODE=checkout|installed|both (default both when dist/ exists).
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { createTestDatabase } from '../../test/helpers/db.ts';
import { buildFixture, REPO_ROOT, TEST_JWT_SECRET } from '../../test/helpers/service.ts';
import { processCpuMs } from '../cpu.ts';

/** BENCH_BIN: another checkout's bin/svc-gen.mjs (a before/after comparison on one machine). */
const CHECKOUT_BIN = process.env.BENCH_BIN ?? join(REPO_ROOT, 'bin', 'svc-gen.mjs');

export type StartMode = 'checkout' | 'installed';

/** Is there a compiled dist/ to run as an installed package would? */
export const hasDist = () => existsSync(join(REPO_ROOT, 'dist', 'cli', 'main.js'));

/**
 * The package as `npm install` lays it out (bin/, dist/, package.json,
 * templates/, no TypeScript sources), in a temporary folder: its bin runs dist/.
 * `checkout`: another checkout's package (built), for a before/after.
 */
export function installedBin(checkout: string = REPO_ROOT): string {
  const root = mkdtempSync(join(tmpdir(), 'svc-installed-'));
  mkdirSync(join(root, 'bin'));
  mkdirSync(join(root, 'cli'));
  copyFileSync(join(checkout, 'bin', 'svc-gen.mjs'), join(root, 'bin', 'svc-gen.mjs'));
  copyFileSync(join(checkout, 'cli', 'resolve-hook.mjs'), join(root, 'cli', 'resolve-hook.mjs'));
  copyFileSync(join(checkout, 'package.json'), join(root, 'package.json'));
  for (const folder of ['dist', 'templates', 'node_modules']) symlinkSync(join(checkout, folder), join(root, folder));
  return join(root, 'bin', 'svc-gen.mjs');
}
const DEADLINE_MS = 30_000;

export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
  readonly all: readonly number[];
}

export interface StartTimes extends Spread {
  /** CPU ms (user + system) of the server process until ready; null where /proc is absent. */
  readonly cpu: Spread | null;
}

function spread(all: number[]): Spread {
  const sorted = [...all].sort((a, b) => a - b);
  return { min: sorted[0], median: sorted[Math.floor((sorted.length - 1) / 2)], max: sorted.at(-1)!, all };
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

function run(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (chunk) => (errors += chunk));
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`svc-gen ${args.join(' ')} exited with ${code}: ${errors}`))));
  });
}

/** Polls /ready of a process we spawned until it answers 200 (an external process: polling with a deadline). */
async function untilReady(url: string, exited: () => boolean): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  for (;;) {
    if (exited()) throw new Error('the server exited before it was ready');
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`not ready after ${DEADLINE_MS} ms`);
    await new Promise((wake) => setTimeout(wake, 5));
  }
}

/** One start: spawn to first 200 of /ready, in ms; the server is stopped (SIGTERM) before returning. */
async function startOnce(bin: string, dir: string, env: NodeJS.ProcessEnv): Promise<{ ms: number; cpu: number | null }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [bin, 'start', dir], {
    env: { ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  let exited = false;
  const gone = new Promise<void>((done) => child.once('exit', () => {
    exited = true;
    done();
  }));
  try {
    await untilReady(`http://127.0.0.1:${port}/ready`, () => exited);
    const ms = performance.now() - started;
    return { ms, cpu: processCpuMs(child.pid!) };
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${stderr}`);
  } finally {
    child.kill('SIGTERM');
    await gone;
  }
}

export async function measureStarts(starts: number, fixture = 'crm', mode: StartMode = 'checkout'): Promise<StartTimes> {
  const bin = mode === 'installed' ? installedBin() : CHECKOUT_BIN;
  const dir = await buildFixture(fixture);
  const database = await createTestDatabase('svc_bench');
  try {
    const env = {
      ...process.env, NODE_OPTIONS: '', DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET, SVC_LOG_LEVEL: 'error', NODE_ENV: 'production',
    };
    await run(bin, ['migrate', dir], env); // up to date before the first measured start
    const runs: Array<{ ms: number; cpu: number | null }> = [];
    for (let i = 0; i < starts; i++) runs.push(await startOnce(bin, dir, env));
    const cpu = runs.every((run) => run.cpu !== null) ? spread(runs.map((run) => run.cpu!)) : null;
    return { ...spread(runs.map((run) => run.ms)), cpu };
  } finally {
    await database.drop();
  }
}

if (resolve(process.argv[1] ?? '') === resolve(import.meta.filename)) {
  const starts = Number(process.env.BENCH_STARTS ?? 10);
  const fixture = process.env.BENCH_FIXTURE ?? 'crm';
  const wanted = process.env.BENCH_START_MODE ?? 'both';
  const modes: StartMode[] = wanted === 'both' ? (hasDist() ? ['checkout', 'installed'] : ['checkout']) : [wanted as StartMode];
  const ms = (n: number) => `${Math.round(n)} ms`;
  for (const mode of modes) {
    const times = await measureStarts(starts, fixture, mode);
    console.log(`svc-gen start, ${mode === 'installed' ? 'installed (dist/)' : 'checkout (sources through tsx)'} (${fixture}, up-to-date database), `
      + `${starts} starts, spawn to first 200 of /ready:`);
    console.log(`  wall: min ${ms(times.min)}  median ${ms(times.median)}  max ${ms(times.max)}  (all: ${times.all.map(Math.round).join(', ')})`);
    if (times.cpu) {
      console.log(`  CPU:  min ${ms(times.cpu.min)}  median ${ms(times.cpu.median)}  max ${ms(times.cpu.max)}  (server process, user + system)`);
    }
  }
  process.exit(0);
}
