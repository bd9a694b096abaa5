/**
 * `npx tsx bench/console/payload.ts`: what a GIN index on `svc_jobs.payload`
 * buys the jobs search and what it costs `POST /jobs` (issue 32, ADR 023).
 * On a database of its own (`h_console_payload_*`, dropped at the end) with
 * BENCH_ROWS jobs (default 1,000,000, seeded with generate_series, payloads
 * shaped like an application's: `{customer: {id}, order, kind, lines}`):
 *
 * 1. the search's latency over HTTP (`GET /jobs/search`, medians of 7) for a
 *    rare, a missing and a common payload value, without the index, then
 *    with `gin (payload jsonb_path_ops)` built concurrently; beside them the
 *    bounded form (the newest WINDOW jobs of the filter, payload matched in
 *    them) as SQL;
 * 2. `POST /jobs` throughput and latency from a child process (BENCH_CONNS
 *    keep-alive connections, BENCH_SECONDS per round) against two copies of
 *    that database, one with the index and one without, each served by its
 *    own instance, rounds alternating, so the ratio is of one run on one
 *    machine (ratios per round pair, and their median).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { admin, createTestDatabase, databaseUrl, queryOnce } from '../../test/helpers/db.ts';
import { startJobsService } from '../../test/jobs/helpers.ts';

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000);
const RUNS = 7;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const CONNS = Number(process.env.BENCH_CONNS ?? 16);
const WINDOW = 10_000;

/** CPU ms used so far by a process (Linux /proc; user + system); 0 when unreadable. */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/**
 * CPU ms spent so far by this process (both in-process servers; the idle one
 * costs next to nothing) and by the Postgres backends of `database`: per
 * request it barely depends on what else loads the machine, unlike throughput.
 */
async function serviceCpuMs(url: string, database: string): Promise<number> {
  const pids = await queryOnce<{ pid: number }>(url, `select pid from pg_stat_activity where datname = '${database}'`);
  const own = process.cpuUsage();
  return pids.reduce((sum, { pid }) => sum + cpuMs(pid), (own.user + own.system) / 1000);
}

const median = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)];
const fmt = (ms: number) => `${ms.toFixed(1).padStart(8)} ms`;

/** A load generator in a child process: CONNS loops of keep-alive POSTs for SECONDS; answers {rps, p50, p99, errors}. */
const LOADER = `
const http = require('node:http');
const { url, token, conns, seconds } = JSON.parse(process.env.LOAD);
const agent = new http.Agent({ keepAlive: true, maxSockets: conns });
const target = new URL(url);
const lat = []; let errors = 0; let n = 0;
const end = Date.now() + seconds * 1000;
function post() {
  return new Promise((resolve) => {
    n++;
    const body = JSON.stringify({ queue: 'orders', kind: 'invoice', payload: { customer: { id: n % 100000 }, order: n, kind: 'invoice', lines: n % 7, note: 'bench ' + n } });
    const started = process.hrtime.bigint();
    const req = http.request({ agent, host: target.hostname, port: target.port, path: '/jobs', method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: 'Bearer ' + token } }, (res) => {
      res.resume();
      res.on('end', () => { if (res.statusCode !== 201 && res.statusCode !== 200) errors++; lat.push(Number(process.hrtime.bigint() - started) / 1e6); resolve(); });
    });
    req.on('error', () => { errors++; resolve(); });
    req.end(body);
  });
}
async function loop() { while (Date.now() < end) await post(); }
const started = Date.now();
Promise.all(Array.from({ length: conns }, loop)).then(() => {
  lat.sort((a, b) => a - b);
  const secs = (Date.now() - started) / 1000;
  process.stdout.write(JSON.stringify({ rps: lat.length / secs, p50: lat[Math.floor(lat.length * 0.5)], p99: lat[Math.floor(lat.length * 0.99)], errors }));
  agent.destroy();
});`;

function load(url: string, token: string): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', LOADER], { env: { ...process.env, LOAD: JSON.stringify({ url, token, conns: CONNS, seconds: SECONDS }) } });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.pipe(process.stderr);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`loader exited ${code}`))));
  });
}

async function main() {
  const database = await createTestDatabase('h_console_payload', { fixture: 'crm' });
  const exec = (text: string) => queryOnce(database.url, text);
  try {
    let closed = false;
    const svc = await startJobsService({ fixture: 'crm', database, env: { SVC_LOG_LEVEL: 'error', SVC_DB_POOL_SIZE: '20' } });
    try {
      const seeded = performance.now();
      await exec(`set statement_timeout = 0; insert into svc_jobs (id, queue, kind, payload, status, attempts, max_attempts, error)
        select '01J' || lpad(g::text, 23, '0'), 'q' || (g % 4), 'invoice',
               jsonb_build_object('customer', jsonb_build_object('id', g % 100000), 'order', g, 'kind', 'invoice', 'lines', g % 7),
               case when g % 10 = 0 then 'dead' else 'succeeded' end, 1, 1, case when g % 10 = 0 then 'smtp refused' end
          from generate_series(1, ${ROWS}) g`);
      await exec('vacuum analyze svc_jobs');
      process.stdout.write(`seeded ${ROWS} jobs in ${((performance.now() - seeded) / 1000).toFixed(1)} s; ${(await exec(`select pg_size_pretty(pg_total_relation_size('svc_jobs')) as s`) as Array<{ s: string }>)[0].s}\n`);

      const adminToken = await svc.token({ role: 'Admin', userId: 'bench-admin' });
      const search = async (query: string) => {
        const ms: number[] = [];
        let found = 0;
        for (let i = 0; i < RUNS; i++) {
          const started = performance.now();
          const reply = await fetch(`${svc.url}/jobs/search?${query}`, { headers: { authorization: `Bearer ${adminToken}` } });
          const body = await reply.json() as { jobs: unknown[] };
          if (!reply.ok) throw new Error(`${query}: ${reply.status} ${JSON.stringify(body)}`);
          found = body.jobs.length;
          ms.push(performance.now() - started);
        }
        return { ms: median(ms), found };
      };
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const bounded = async (status: string | null, payload: string) => {
        const ms: number[] = [];
        const byStatus = status === null ? '' : `and status = '${status}'`;
        for (let i = 0; i < RUNS; i++) {
          const started = performance.now();
          await client.query(`select * from (select * from svc_jobs where tenant_id is null ${byStatus} order by id desc limit ${WINDOW}) w
                        where payload @> '${payload}' order by id desc limit 51`);
          ms.push(performance.now() - started);
        }
        return median(ms);
      };
      const cases: Array<[string, string, string | null, string]> = [
        ['rare value (10 of 1M): customer.id=4242', 'payload={"customer":{"id":4242}}', null, '{"customer":{"id":4242}}'],
        ['rare value, status=dead: customer.id=4240', 'status=dead&payload={"customer":{"id":4240}}', 'dead', '{"customer":{"id":4240}}'],
        ['one job: order=123457', 'payload={"order":123457}', null, '{"order":123457}'],
        ['missing value: customer.id=-1 (0 matches)', 'payload={"customer":{"id":-1}}', null, '{"customer":{"id":-1}}'],
        ['common value: kind=invoice (every job)', 'payload={"kind":"invoice"}', null, '{"kind":"invoice"}'],
        ['status=dead, common lines=3', 'status=dead&payload={"lines":3}', 'dead', '{"lines":3}'],
      ];
      const results = new Map<string, { none?: { ms: number; found: number }; gin?: { ms: number; found: number }; bounded?: number }>();
      for (const [name, query, status, payload] of cases) {
        results.set(name, { none: await search(query.replace(/payload=(.*)$/, (_, p: string) => `payload=${encodeURIComponent(p)}`)), bounded: await bounded(status, payload) });
      }
      await client.end();
      const built = performance.now();
      await exec('create index concurrently svc_jobs_payload on svc_jobs using gin (payload jsonb_path_ops)');
      const buildSecs = (performance.now() - built) / 1000;
      await exec('analyze svc_jobs');
      const size = (await exec(`select pg_size_pretty(pg_relation_size('svc_jobs_payload')) as s`) as Array<{ s: string }>)[0].s;
      for (const [name, query] of cases) {
        results.get(name)!.gin = await search(query.replace(/payload=(.*)$/, (_, p: string) => `payload=${encodeURIComponent(p)}`));
      }
      process.stdout.write(`\nGIN (payload jsonb_path_ops): built concurrently in ${buildSecs.toFixed(1)} s, ${size}\n`);
      process.stdout.write(`${'GET /jobs/search (median of 7)'.padEnd(48)} ${'no index'.padStart(11)} ${'GIN'.padStart(11)}   bounded newest ${WINDOW} (SQL)\n`);
      for (const [name] of cases) {
        const r = results.get(name)!;
        process.stdout.write(`${name.padEnd(48)} ${fmt(r.none!.ms)} ${fmt(r.gin!.ms)}   ${fmt(r.bounded!)}   (found ${r.none!.found} / ${r.gin!.found})\n`);
      }

      // POST /jobs: two copies of the database, one with the index and one without, each served by its own
      // instance, rounds alternating between them (no index build between rounds, none running during one).
      await svc.close();
      closed = true;
      const copy = `${database.name}_b`;
      await admin(async (c) => { await c.query(`create database "${copy}" template "${database.name}"`); });
      const plainDb = { name: copy, url: databaseUrl(copy), drop: () => admin(async (c) => { await c.query(`drop database if exists "${copy}" with (force)`); }) };
      try {
        await queryOnce(plainDb.url, 'drop index svc_jobs_payload');
        const env = { SVC_LOG_LEVEL: 'error', SVC_DB_POOL_SIZE: '20' };
        const withGin = await startJobsService({ fixture: 'crm', database, env });
        const without = await startJobsService({ fixture: 'crm', database: plainDb, env });
        try {
          const targets = { gin: { svc: withGin, token: await withGin.token({ role: 'Viewer', userId: 'bench-user' }) },
            none: { svc: without, token: await without.token({ role: 'Viewer', userId: 'bench-user' }) } };
          await load(withGin.url, targets.gin.token);
          await load(without.url, targets.none.token);
          const rows: Array<{ gin: boolean; rps: number; p50: number; p99: number; errors: number; cpu: number }> = [];
          for (let round = 0; round < ROUNDS; round++) {
            for (const gin of round % 2 === 0 ? [false, true] : [true, false]) {
              const target = gin ? targets.gin : targets.none;
              await queryOnce(target.svc.database.url, 'checkpoint');
              const cpuBefore = await serviceCpuMs(target.svc.database.url, target.svc.database.name);
              const r = await load(target.svc.url, target.token);
              const cpu = (await serviceCpuMs(target.svc.database.url, target.svc.database.name) - cpuBefore) / (r.rps * SECONDS);
              rows.push({ gin, ...r, cpu });
              process.stdout.write(`round ${round + 1} ${gin ? 'GIN     ' : 'no index'}  POST /jobs ${r.rps.toFixed(0).padStart(6)}/s  p50 ${r.p50.toFixed(1)} ms  `
                + `p99 ${r.p99.toFixed(1)} ms  CPU ${cpu.toFixed(2)} ms/request (server + its backends)  errors ${r.errors}\n`);
            }
          }
          const avg = (gin: boolean, key: 'rps' | 'p50' | 'p99' | 'cpu') => median(rows.filter((r) => r.gin === gin).map((r) => r[key]));
          const pairs = Array.from({ length: ROUNDS }, (_, i) => rows.filter((r) => r.gin)[i].rps / rows.filter((r) => !r.gin)[i].rps);
          process.stdout.write(`\nPOST /jobs c=${CONNS}, ${SECONDS} s x ${ROUNDS} rounds each (medians): no index ${avg(false, 'rps').toFixed(0)}/s `
            + `(p50 ${avg(false, 'p50').toFixed(1)}, p99 ${avg(false, 'p99').toFixed(1)} ms), GIN ${avg(true, 'rps').toFixed(0)}/s `
            + `(p50 ${avg(true, 'p50').toFixed(1)}, p99 ${avg(true, 'p99').toFixed(1)} ms); GIN/none per round ${pairs.map((p) => p.toFixed(3)).join(', ')}, median ${median(pairs).toFixed(3)}\n`
            + `CPU per request (server + its Postgres backends, medians): no index ${avg(false, 'cpu').toFixed(2)} ms, GIN ${avg(true, 'cpu').toFixed(2)} ms: GIN/none ${(avg(true, 'cpu') / avg(false, 'cpu')).toFixed(3)}\n`);
        } finally {
          await without.close();
          await withGin.close();
        }
      } finally {
        await plainDb.drop();
      }
    } finally {
      if (!closed) await svc.close();
    }
  } finally {
    await database.drop();
  }
}

await main();
process.exit(0);
