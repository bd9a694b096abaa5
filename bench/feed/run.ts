/**
 * `npm run bench:feed`: GraphQL `create` throughput at 32 and 64 connections
 * on one svc-gen instance and on two instances sharing one Postgres, beside
 * the raw Node+pg floor (same statement, with and without the per-write
 * pg_notify that every write paid before the change feed) and, unless
 * BENCH_BEFORE=0, the runtime before the feed (git commit BENCH_BEFORE_REF,
 * exported to a temporary folder). During each svc-gen run a probe measures
 * cross-instance modelChanges delivery (p50/p99) and the bench samples the
 * feed readers' lag. Every server runs in its own process.
 *
 *   npm run bench:feed        BENCH_SECONDS (default 5), BENCH_BEFORE=0, BENCH_BEFORE_REF
 */
import { execSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { TokenSigner } from '../../runtime/auth/index.ts';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { buildFixture, REPO_ROOT } from '../../test/helpers/service.ts';
import { runLoad, type LoadResult } from '../records/load.ts';
import { percentile, probe, type ProbeResult } from './probe.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = [32, 64];
const POOL_SIZE = '20';
const SECRET = 'bench-secret-of-sufficient-length-0123456789';
const BEFORE_REF = process.env.BENCH_BEFORE_REF ?? '3413132';
const WITH_BEFORE = process.env.BENCH_BEFORE !== '0';

interface Server {
  readonly url: string;
  readonly child: ChildProcess;
}

interface Row {
  readonly target: string;
  readonly connections: number;
  readonly load: LoadResult;
  readonly probe?: ProbeResult;
  readonly lag?: { p50: number; p99: number; max: number };
}

const children = new Set<ChildProcess>();
/** Delivery latency with no load beside the probe: what the mechanism itself costs. */
const idle: Array<[string, ProbeResult]> = [];

function start(script: string, args: string[], env: Record<string, string>): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, script), ...args], {
    cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  children.add(child);
  return new Promise((resolveServer, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      // The instance's own log lines are JSON on stdout too: wait for the one that carries the url.
      const line = out.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolveServer({ url: JSON.parse(line).url, child });
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (${code})`)));
  });
}

async function stop(server: Server): Promise<void> {
  const { child } = server;
  children.delete(child);
  if (child.exitCode !== null) return;
  await new Promise<void>((done) => {
    child.once('exit', () => done());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

/** A user and a live session per token, as a login would write them. */
async function tokens(databaseUrl: string): Promise<{ load: string; probe: string }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => undefined); // a failure surfaces from the query; never crash on a dropped connection
  await client.connect();
  try {
    const users = [['bench', null], ['probe', 'probe']] as const;
    for (const [id, tenant] of users) {
      await client.query(`insert into svc_users (id, email, role, tenant_id) values ($1, $1 || '@bench.invalid', 'Sales', $2) on conflict do nothing`, [id, tenant]);
      await client.query(`insert into svc_sessions (id, user_id, role, tenant_id, expires_at) values ('s-' || $1, $1, 'Sales', $2, now() + interval '1 day') on conflict do nothing`, [id, tenant]);
    }
  } finally {
    await client.end();
  }
  const signer = new TokenSigner(SECRET, 3600);
  const sign = (userId: string, tenantId: string | null) => signer.sign({ userId, role: 'Sales', tenantId, sessionId: `s-${userId}`, email: null });
  return { load: await sign('bench', null), probe: await sign('probe', 'probe') };
}

const CREATE = JSON.stringify({ query: 'mutation($d: JSON!) { create(model: "Item", data: $d) }', variables: { d: { name: 'bench', price: 1 } } });
const FLOOR_BODY = JSON.stringify({ name: 'bench', price: 1 });

/** Splits `connections` over the urls, runs them together; rps summed, latency the worst of them. */
async function load(urls: string[], connections: number, body: string, headers: Record<string, string>, seconds: number): Promise<LoadResult> {
  const share = Math.floor(connections / urls.length);
  const parts = await Promise.all(urls.map((url) => runLoad({ url, connections: share, seconds, body, headers })));
  return {
    rps: parts.reduce((n, r) => n + r.rps, 0),
    p50: Math.max(...parts.map((r) => r.p50)), p99: Math.max(...parts.map((r) => r.p99)),
    errors: parts.reduce((n, r) => n + r.errors, 0), non2xx: parts.reduce((n, r) => n + r.non2xx, 0),
  };
}

/** Samples the feed readers' lag over IPC while `work` runs. */
async function sampleLag<T>(servers: Server[], work: Promise<T>): Promise<[T, Row['lag']]> {
  const samples: number[] = [];
  let max = 0;
  let done = false;
  const ask = (server: Server) => new Promise<void>((answered) => {
    const onMessage = (message: any) => {
      server.child.off('message', onMessage);
      if (message?.stats) {
        samples.push(message.stats.lastLagMs);
        max = Math.max(max, message.stats.maxLagMs);
      }
      answered();
    };
    server.child.on('message', onMessage);
    server.child.send('stats');
  });
  const sampler = (async () => {
    while (!done) {
      await Promise.all(servers.map(ask));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const result = await work;
  done = true;
  await sampler;
  return [result, samples.length > 0 && samples.some((s) => s > 0) ? { p50: percentile(samples, 50), p99: percentile(samples, 99), max } : undefined];
}

/** One request first: a bench of error responses measures nothing. */
async function check(url: string, body: string, headers: Record<string, string>): Promise<void> {
  const response = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await response.text();
  if (response.status !== 200 || text.includes('"errors"')) throw new Error(`create failed: ${response.status} ${text}`);
}

async function measureSvc(label: string, servers: Server[], connections: number, token: { load: string; probe: string }): Promise<Row> {
  const urls = servers.map((s) => s.url);
  const endpoints = urls.map((url) => `${url}/graphql`);
  const headers = { authorization: `Bearer ${token.load}` };
  await check(urls[0], CREATE, headers);
  await load(endpoints, connections, CREATE, headers, 1); // warm-up: JIT, pools, plan caches
  const subscriberUrl = urls[urls.length - 1]; // the other instance when there are two
  const work = Promise.all([load(endpoints, connections, CREATE, headers, SECONDS), probe(urls[0], subscriberUrl, token.probe, SECONDS - 0.5)]);
  const [[result, probed], lag] = await sampleLag(servers, work);
  process.stderr.write(`${label} c=${connections}: ${Math.round(result.rps)} req/s, probe p99 ${probed.ackP99.toFixed(1)} ms\n`);
  return { target: label, connections, load: result, probe: probed, lag };
}

async function measureFloor(label: string, servers: Server | Server[], connections: number): Promise<Row> {
  const urls = [servers].flat().map((server) => `${server.url}/create`);
  await load(urls, connections, FLOOR_BODY, {}, 1);
  const result = await load(urls, connections, FLOOR_BODY, {}, SECONDS);
  process.stderr.write(`${label} c=${connections}: ${Math.round(result.rps)} req/s\n`);
  return { target: label, connections, load: result };
}

/** The runtime at BEFORE_REF, exported next to this checkout's node_modules. */
function exportBefore(): string {
  const dir = join('/tmp', `svc-feed-before-${BEFORE_REF}`);
  if (!existsSync(join(dir, 'runtime'))) {
    mkdirSync(dir, { recursive: true });
    execSync(`git archive ${BEFORE_REF} | tar -x -C ${dir}`, { cwd: REPO_ROOT, stdio: 'inherit' });
  }
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(REPO_ROOT, 'node_modules'), join(dir, 'node_modules'));
  return join(dir, 'runtime');
}

async function svcRuns(label: string, dir: string, database: TestDatabase, runtime: string | null): Promise<Row[]> {
  const env: Record<string, string> = {
    DATABASE_URL: database.url, JWT_SECRET: SECRET, SVC_LOG_LEVEL: 'error', RATE_LIMIT_RPS: '10000000', SVC_DB_POOL_SIZE: POOL_SIZE,
    ...(runtime ? { BENCH_RUNTIME: runtime } : {}),
  };
  const rows: Row[] = [];
  const first = await start('instance.ts', [dir], env);
  const token = await tokens(database.url);
  for (const c of CONNECTIONS) rows.push(await measureSvc(`${label}, 1 instance`, [first], c, token));
  const second = await start('instance.ts', [dir], env);
  idle.push([label, await probe(first.url, second.url, token.probe, 3)]);
  for (const c of CONNECTIONS) rows.push(await measureSvc(`${label}, 2 instances`, [first, second], c, token));
  await stop(second);
  await stop(first);
  return rows;
}

async function main(): Promise<void> {
  const dir = await buildFixture(resolve(REPO_ROOT, 'bench', 'records', 'schema.ts'));
  const after = await createTestDatabase('svc_feedbench');
  const before = WITH_BEFORE ? await createTestDatabase('svc_feedbench') : null;
  const rows: Row[] = [];
  try {
    rows.push(...await svcRuns('svc-gen (feed)', dir, after, null));
    const floorEnv = { DATABASE_URL: after.url, SVC_DB_POOL_SIZE: POOL_SIZE };
    for (const [label, notify] of [['floor raw pg', '0'], ['floor raw pg + pg_notify', '1']] as const) {
      const floor = await start('floor.ts', [], { ...floorEnv, BENCH_NOTIFY: notify });
      for (const c of CONNECTIONS) rows.push(await measureFloor(label, floor, c));
      await stop(floor);
    }
    // What a second process buys on this machine at all: the same floor, split over two processes.
    const floors = [await start('floor.ts', [], { ...floorEnv, BENCH_NOTIFY: '0' }), await start('floor.ts', [], { ...floorEnv, BENCH_NOTIFY: '0' })];
    for (const c of CONNECTIONS) rows.push(await measureFloor('floor raw pg, 2 instances', floors, c));
    for (const floor of floors) await stop(floor);
    if (before) rows.push(...await svcRuns(`svc-gen before (${BEFORE_REF})`, dir, before, exportBefore()));
  } finally {
    for (const child of children) child.kill('SIGKILL');
    await after.drop();
    await before?.drop();
  }
  print(rows);
}

function print(rows: Row[]): void {
  const floor = (c: number) => rows.find((r) => r.target === 'floor raw pg' && r.connections === c)!.load.rps;
  const one = (label: string, c: number) => rows.find((r) => (r.target === `${label}, 1 instance` || r.target === label) && r.connections === c)?.load.rps;
  const head = ['target', 'conns', 'req/s', 'x floor', 'x 1 inst', 'p50 ms', 'p99 ms', 'errors', 'deliv p50', 'deliv p99', 'send->deliv p99', 'lost', 'lag p50', 'lag p99', 'lag max'];
  const fmt = (n: number | undefined, digits = 1) => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(digits));
  const body = rows.map((r) => {
    const base = r.target.endsWith('2 instances') ? one(r.target.replace(', 2 instances', ''), r.connections) : undefined;
    return [r.target, String(r.connections), String(Math.round(r.load.rps)), (r.load.rps / floor(r.connections)).toFixed(2),
      base ? (r.load.rps / base).toFixed(2) : '-', String(r.load.p50), String(r.load.p99), String(r.load.errors + r.load.non2xx),
      fmt(r.probe?.ackP50), fmt(r.probe?.ackP99), fmt(r.probe?.sendP99), r.probe ? String(r.probe.sent - r.probe.delivered) : '-',
      fmt(r.lag?.p50), fmt(r.lag?.p99), fmt(r.lag?.max)];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(`\ncreate over GraphQL, ${SECONDS} s per run; deliv = modelChanges on the other instance, from the create's ack (ms)\n`);
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of body) console.log(line(row));
  console.log('\ncross-instance delivery with no load beside the probe (50 creates/s, ms from the ack):');
  for (const [label, r] of idle) console.log(`  ${label}: p50 ${fmt(r.ackP50)}, p99 ${fmt(r.ackP99)}, lost ${r.sent - r.delivered} of ${r.sent}`);
  console.log('\ntargets: 2 instances >= 1.6 x 1 instance; cross-instance delivery p99 < 100 ms');
  console.log(`this machine: ${cpus().length} cores shared by Postgres, every server process and the load generator`);
}

main().catch((error) => {
  console.error(error);
  for (const child of children) child.kill('SIGKILL');
  process.exit(1);
});
