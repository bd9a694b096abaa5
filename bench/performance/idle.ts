/**
 * `npx tsx bench/performance/idle.ts`: what an installed svc-gen costs while it
 * serves nothing, this checkout beside BENCH_BEFORE (another built checkout),
 * each on a database of its own (the records bench's schema, as the create
 * rows run it). The CPU of its process and of its Postgres backends, and the
 * statements it sends (counted in the process by ./count-statements.mjs),
 * over two windows:
 *
 *   idle   IDLE_SECONDS (default 30) after a settle of 5 s: its timers alone
 *   after  IDLE_SECONDS after BURST_SECONDS (default 6, one slice of the bench's
 *          create rows) of creates at c=BURST_CONNECTIONS (default 16): the work a burst leaves behind,
 *          which in bench:performance runs during the other system's slice
 *
 * Both versions are up throughout (as in the bench's before/after pair); each
 * is measured while the other one is idle.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { runLoad } from '../records/load.ts';
import { CREATE_BODY, RECORDS_SCHEMA, startInstalled, type InstalledService } from './installed.ts';
import { CpuMeter } from './processes.ts';

const IDLE_SECONDS = Number(process.env.IDLE_SECONDS ?? 30);
const BURST_SECONDS = Number(process.env.BURST_SECONDS ?? 6);
const BURST_CONNECTIONS = Number(process.env.BURST_CONNECTIONS ?? 16);
const TOP = Number(process.env.IDLE_TOP ?? 12);
const HOOK = pathToFileURL(join(import.meta.dirname, 'count-statements.mjs')).href;
const dir = mkdtempSync(join(tmpdir(), 'svc-idle-'));

interface Version {
  readonly label: string;
  readonly svc: InstalledService;
  readonly statements: string;
}

interface Window {
  /** CPU ms of the process and of its backends. */
  readonly node: number;
  readonly pg: number;
  /** Statements sent, by text. */
  readonly sent: Map<string, number>;
  /** The CPU of the window's thirds (the first, the second, the last), process + backends, ms. */
  readonly thirds: readonly number[];
  /** The CPU of each of the first 10 seconds, ms. */
  readonly first: readonly number[];
}

async function start(label: string, checkout?: string): Promise<Version> {
  const statements = join(dir, `${label.replace(/\W+/g, '-')}.json`);
  const svc = await startInstalled(RECORDS_SCHEMA, {
    SVC_DB_POOL_SIZE: '10', NODE_OPTIONS: `--import ${HOOK}`, SVC_BENCH_STATEMENTS: statements,
  }, checkout);
  return { label, svc, statements };
}

/** The statements the version has sent so far (the hook writes them on SIGUSR2). */
async function sentSoFar(version: Version): Promise<Map<string, number>> {
  rmSync(version.statements, { force: true });
  process.kill(version.svc.pid, 'SIGUSR2');
  for (let waited = 0; !existsSync(version.statements); waited += 10) {
    if (waited > 5000) throw new Error(`${version.label}: no statement counts (is count-statements.mjs loaded?)`);
    await sleep(10);
  }
  return new Map(Object.entries(JSON.parse(readFileSync(version.statements, 'utf8')) as Record<string, number>));
}

/** CPU ms by pid now: the process's and its backends'. */
const cpu = (meter: CpuMeter, version: Version) =>
  meter.sample([version.svc.pid], { database: version.svc.database.name, application: 'svc-gen%' });

/**
 * CPU and statements over IDLE_SECONDS, sampled every second (a backend the
 * pool closes in between loses at most its last second; one it opens counts whole).
 */
async function window(meter: CpuMeter, version: Version): Promise<Window> {
  const sentBefore = await sentSoFar(version);
  let last = await cpu(meter, version);
  let node = 0;
  let pg = 0;
  const seconds: number[] = [];
  for (let second = 0; second < IDLE_SECONDS; second++) {
    await sleep(1000);
    const now = await cpu(meter, version);
    let spent = 0;
    for (const [pid, ms] of now) {
      const delta = ms - (last.get(pid) ?? 0);
      spent += delta;
      if (pid === version.svc.pid) node += delta;
      else pg += delta;
    }
    seconds.push(spent);
    last = now;
  }
  const sent = difference(await sentSoFar(version), sentBefore);
  const third = Math.ceil(IDLE_SECONDS / 3);
  const thirds = [0, 1, 2].map((i) => seconds.slice(i * third, (i + 1) * third).reduce((a, b) => a + b, 0));
  return { node, pg, sent, thirds, first: seconds.slice(0, 10) };
}

/** BURST_SECONDS of creates at c=16: how many, and the statements sent meanwhile. */
async function burst(version: Version): Promise<{ creates: number; sent: Map<string, number> }> {
  const headers = { authorization: `Bearer ${await version.svc.token('Sales', 'bench')}` };
  const sentBefore = await sentSoFar(version);
  const result = await runLoad({ url: `${version.svc.url}/graphql`, connections: BURST_CONNECTIONS, headers, body: CREATE_BODY, seconds: BURST_SECONDS });
  return { creates: Math.round(result.rps * BURST_SECONDS), sent: difference(await sentSoFar(version), sentBefore) };
}

function difference(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  const sent = new Map<string, number>();
  for (const [text, n] of after) if (n - (before.get(text) ?? 0) > 0) sent.set(text, n - (before.get(text) ?? 0));
  return sent;
}

function print(title: string, windows: ReadonlyArray<{ version: Version; result: Window; note?: string }>): void {
  console.log(`\n${title} (${IDLE_SECONDS} s; load average ${loadavg().map((l) => l.toFixed(2)).join(', ')})`);
  for (const { version, result, note } of windows) {
    const total = [...result.sent.values()].reduce((a, b) => a + b, 0);
    console.log(`  ${version.label}${note ? ` (${note})` : ''}: process ${result.node.toFixed(0)} ms, backends ${result.pg.toFixed(0)} ms `
      + `(${((result.node + result.pg) / IDLE_SECONDS).toFixed(1)} ms of CPU per second; by third ${result.thirds.map((t) => t.toFixed(0)).join(' / ')} ms; the first seconds ${result.first.map((t) => t.toFixed(0)).join(' ')}); `
      + `${total} statements`);
    const top = [...result.sent].sort((a, b) => b[1] - a[1]).slice(0, TOP);
    for (const [text, n] of top) console.log(`    ${String(n).padStart(6)}  ${text.slice(0, 140)}`);
  }
}

const before = process.env.BENCH_BEFORE ? resolve(process.env.BENCH_BEFORE) : undefined;
const versions = [await start('now')];
if (before) versions.push(await start(`before (${before})`, before));
const meter = await CpuMeter.open();
try {
  await sleep(5000);
  const idle = [];
  for (const version of versions) idle.push({ version, result: await window(meter, version) });
  print('idle', idle);
  const after = [];
  for (const version of versions) {
    const { creates, sent } = await burst(version);
    console.log(`\n${version.label}: statements per create during ${creates} creates in ${BURST_SECONDS} s at c=${BURST_CONNECTIONS}`);
    for (const [text, n] of [...sent].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`  ${(n / creates).toFixed(3).padStart(7)}  ${text.slice(0, 140)}`);
    after.push({ version, result: await window(meter, version), note: `after ${creates} creates in ${BURST_SECONDS} s at c=${BURST_CONNECTIONS}` });
  }
  print('after a burst of creates', after);
} finally {
  await meter.close();
  for (const version of versions) await version.svc.stop();
  rmSync(dir, { recursive: true, force: true });
}
