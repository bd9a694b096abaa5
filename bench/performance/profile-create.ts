/**
 * `npx tsx bench/performance/profile-create.ts`: where a GraphQL create's
 * CPU goes in the service's process, this checkout beside BENCH_BEFORE
 * (another built checkout): each installed on a database of its own with
 * --perf-basic-prof, PROFILE_SECONDS (default 10) of creates at c=16 under
 * `perf record -a -g`, then the top functions by self time of the service's
 * process ("node:") and of its Postgres backends ("pg:"), in µs per request,
 * side by side. Needs `perf` (linux-perf) and root.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CREATE_BODY, RECORDS_SCHEMA, startInstalled } from './installed.ts';
import { runLoad } from '../records/load.ts';

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 10);
const TOP = Number(process.env.PROFILE_TOP ?? 30);
/** PROFILE_PERF=0: the same runs without perf (throughput only), to see what perf's overhead hides. */
const PERF = process.env.PROFILE_PERF !== '0';

async function profile(label: string, checkout: string | undefined): Promise<Map<string, number>> {
  const svc = await startInstalled(RECORDS_SCHEMA, { SVC_DB_POOL_SIZE: '20', ...(PERF ? { NODE_OPTIONS: '--perf-basic-prof' } : {}) }, checkout);
  const dir = mkdtempSync(join(tmpdir(), 'svc-perf-'));
  try {
    const headers = { authorization: `Bearer ${await svc.token('Sales', 'bench')}` };
    await runLoad({ url: `${svc.url}/graphql`, connections: 16, headers, body: CREATE_BODY, seconds: 3 });
    const file = join(dir, 'perf.data');
    const { rows } = await svc.pool.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and application_name like 'svc-gen%'`);
    const backends = new Set(rows.map((r) => r.pid));
    const perf = PERF ? spawn('perf', ['record', '-F', '999', '-g', '-a', '-o', file], { stdio: 'ignore' }) : null;
    const result = await runLoad({ url: `${svc.url}/graphql`, connections: 16, headers, body: CREATE_BODY, seconds: SECONDS });
    if (!perf) {
      console.log(`${label}: ${Math.round(result.rps)} req/s (no perf)`);
      return new Map();
    }
    perf.kill('SIGINT');
    await new Promise((done) => perf.once('exit', done));
    const requests = result.rps * SECONDS;
    const script = execFileSync('perf', ['script', '-i', file, '-F', 'pid,ip,sym', '--no-inline'], { maxBuffer: 2 ** 31, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    // The first frame of each sample is its self function.
    // A sample: a header line with its pid, then its frames, the first one its self function.
    // The service's process is "node:", its Postgres backends "pg:"; other processes are left out.
    const self = new Map<string, number>();
    const per = { node: 0, pg: 0 };
    let kind: 'node' | 'pg' | null = null;
    let first = false;
    for (const line of script.split('\n')) {
      if (line.trim() === '') { kind = null; continue; }
      const header = line.startsWith('\t') ? null : /^\s*(\d+)/.exec(line);
      if (header) {
        const pid = Number(header[1]);
        kind = pid === svc.pid ? 'node' : backends.has(pid) ? 'pg' : null;
        first = true;
        if (kind) per[kind]++;
        continue;
      }
      if (!kind || !first) continue;
      first = false;
      const sym = line.trim().split(/\s+/).slice(1).join(' ') || '[unknown]'; // the address first, then the symbol
      self.set(`${kind}: ${sym}`, (self.get(`${kind}: ${sym}`) ?? 0) + 1);
    }
    const usPerSample = 1e6 / 999;
    console.log(`${label}: ${Math.round(result.rps)} req/s; CPU per request: the service's process ${(per.node * usPerSample / requests).toFixed(0)} µs, `
      + `its ${backends.size} Postgres backends ${(per.pg * usPerSample / requests).toFixed(0)} µs`);
    // One name per function in both checkouts: the checkout's path left out.
    const root = checkout ?? resolve(import.meta.dirname, '..', '..');
    const merged = new Map<string, number>();
    for (const [k, v] of self) {
      const name = k.split(`file://${root}/`).join('').split(`${root}/`).join('');
      merged.set(name, (merged.get(name) ?? 0) + (v * usPerSample) / requests);
    }
    return merged;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await svc.stop();
  }
}

const now = await profile('this checkout', undefined);
const before = process.env.BENCH_BEFORE ? await profile(`before (${process.env.BENCH_BEFORE})`, resolve(process.env.BENCH_BEFORE)) : new Map<string, number>();
const names = [...new Set([...now.keys(), ...before.keys()])]
  .sort((a, b) => Math.abs((now.get(b) ?? 0) - (before.get(b) ?? 0)) - Math.abs((now.get(a) ?? 0) - (before.get(a) ?? 0)));
console.log(`\n${'µs/request now'.padStart(15)}${'before'.padStart(9)}${'diff'.padStart(8)}  function (self), by the largest difference`);
for (const name of names.slice(0, TOP)) {
  const a = now.get(name) ?? 0;
  const b = before.get(name) ?? 0;
  console.log(`${a.toFixed(1).padStart(15)}${b.toFixed(1).padStart(9)}${(a - b).toFixed(1).padStart(8)}  ${name.slice(0, 110)}`);
}
