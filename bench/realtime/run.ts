/**
 * bench:realtime: 1,000 subscribers on one channel, 20 messages/s for ~10 s,
 * against a bare `ws` fan-out server (baseline), one svc-gen instance, and
 * two instances on one database (subscribers split, publisher on the first).
 * Servers run in their own processes; traffic stays on 127.0.0.1.
 *
 *   npm run bench:realtime            BENCH_SUBSCRIBERS, BENCH_RATE, BENCH_SECONDS override
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';
import { TokenSigner } from '../../runtime/auth/index.ts';
import { createTestDatabase } from '../../test/helpers/db.ts';
import { buildFixture, REPO_ROOT } from '../../test/helpers/service.ts';
import { runLoad, type LoadResult } from './load.ts';

const SECRET = 'bench-secret-of-sufficient-length-0123456789';
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const RATE = Number(process.env.BENCH_RATE ?? 20);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** Distinct users among the subscribers (each user's first subscription is announced to all present). */
const USERS = Number(process.env.BENCH_USERS ?? Math.ceil(SUBSCRIBERS / 10));
const TARGET_P99_MS = 50;

const children: ChildProcess[] = [];

function startProcess(script: string, args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, script), ...args], {
    cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      // Log lines are JSON on stdout too: wait for the one that carries the url.
      const line = out.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) resolve(JSON.parse(line).url);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited (${code})`)));
  });
}

async function stopAll(): Promise<void> {
  await Promise.all(children.splice(0).map((child) => new Promise<void>((done) => {
    if (child.exitCode !== null) return done();
    child.once('exit', () => done());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  })));
}

/**
 * Tokens the server accepts: the auth capability wants a live session, so
 * the users and sessions are inserted as logins would (in one statement each).
 */
async function mintTokens(databaseUrl: string | null): Promise<(userId: string) => Promise<string>> {
  const signer = new TokenSigner(SECRET, 3600);
  const ids = [...Array.from({ length: USERS }, (_, n) => `sub-${n}`), 'publisher'];
  if (databaseUrl) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`insert into svc_users (id, email, role, tenant_id)
      select id, id || '@bench.invalid', 'Viewer', 'bench' from unnest($1::text[]) as id on conflict do nothing`, [ids]);
    await client.query(`insert into svc_sessions (id, user_id, role, tenant_id, expires_at)
      select 's-' || id, id, 'Viewer', 'bench', now() + interval '1 day' from unnest($1::text[]) as id
      on conflict do nothing`, [ids]);
    await client.end();
  }
  return (userId) => signer.sign({ userId, role: 'Viewer', tenantId: 'bench', sessionId: `s-${userId}`, email: null });
}

async function scenario(name: string, urls: string[], databaseUrl: string | null): Promise<[string, LoadResult]> {
  const token = await mintTokens(databaseUrl);
  process.stderr.write(`running: ${name}\n`);
  const result = await runLoad({ urls, subscribers: SUBSCRIBERS, users: USERS, rate: RATE, seconds: SECONDS, token });
  return [name, result];
}

function printTable(rows: Array<[string, LoadResult]>): void {
  const head = ['scenario', 'connect s', 'delivered', 'expected', 'msgs/s', 'p50 ms', 'p99 ms', 'max ms', `p99 < ${TARGET_P99_MS} ms`];
  const body = rows.map(([name, r]) => [name, (r.connectMs / 1000).toFixed(1), String(r.delivered), String(r.expected), r.perSecond.toFixed(0),
    r.p50.toFixed(1), r.p99.toFixed(1), r.max.toFixed(1), r.p99 < TARGET_P99_MS ? 'yes' : 'NO']);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(`\n${SUBSCRIBERS} subscribers (${USERS} distinct users), ${RATE} msgs/s for ${SECONDS} s\n`);
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const row of body) console.log(line(row));
}

async function main(): Promise<void> {
  const dir = await buildFixture('small');
  const database = await createTestDatabase('svc_rtbench');
  const env = { DATABASE_URL: database.url, JWT_SECRET: SECRET, SVC_LOG_LEVEL: 'warn', RATE_LIMIT_RPS: '1000000' };
  const rows: Array<[string, LoadResult]> = [];
  try {
    rows.push(await scenario('baseline: bare ws fan-out', [await startProcess('baseline.ts', [], {})], null));
    const first = await startProcess('instance.ts', [dir], env);
    rows.push(await scenario('svc-gen, 1 instance', [first], database.url));
    // The second instance joins the first one's database: subscribers split, publisher on the first.
    rows.push(await scenario('svc-gen, 2 instances', [first, await startProcess('instance.ts', [dir], env)], database.url));
  } finally {
    await stopAll();
    await database.drop();
  }
  printTable(rows);
}

main().catch(async (error) => {
  console.error(error);
  await stopAll();
  process.exit(1);
});
