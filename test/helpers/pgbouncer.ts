/**
 * A private pgbouncer (Debian's 1.18, `.ci/run` installs it) in transaction
 * mode in front of the local Postgres, on a free port, with its own config in
 * a temporary folder. pgbouncer refuses to run as root: it runs as the
 * `postgres` user when the test runs as root.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import pg from 'pg';
import { ADMIN_URL } from './db.ts';

export interface Pgbouncer {
  readonly port: number;
  /** `url` (a URL of the local Postgres) rewritten to go through this pgbouncer. */
  pooled(url: string): string;
  /** One row per line of the admin console's `SHOW <what>`. */
  show(what: 'POOLS' | 'STATS'): Promise<Array<Record<string, unknown>>>;
  stop(): Promise<void>;
  /** Synchronous stop, for a process 'exit' handler. */
  kill(): void;
}

/** A free loopback port (not from ./cli.ts: service.ts imports this file, and cli.ts imports service.ts). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function binary(): string {
  for (const path of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer']) {
    if (spawnSync(path, ['--version']).status === 0) return path;
  }
  throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer; .ci/run does it)');
}

/** uid/gid of `postgres` when we are root (pgbouncer will not run as root). */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

const WATCHDOG = `"$1" "$2" & child=$!
trap 'kill $child 2>/dev/null; wait $child; rm -rf "$(dirname "$2")"; exit 0' TERM INT
while [ -d "/proc/$3" ] && kill -0 $child 2>/dev/null; do sleep 0.2; done
kill $child 2>/dev/null
wait $child
rm -rf "$(dirname "$2")"`;

export async function startPgbouncer(options: { poolSize?: number } = {}): Promise<Pgbouncer> {
  const upstream = new URL(ADMIN_URL);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'svc-pgbouncer-'));
  const user = decodeURIComponent(upstream.username || 'postgres');
  writeFileSync(join(dir, 'userlist.txt'), `"${user}" ""\n`);
  writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `* = host=${upstream.hostname} port=${upstream.port || '5432'}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    'pool_mode = transaction',
    `default_pool_size = ${options.poolSize ?? 4}`,
    'max_client_conn = 1000',
    'ignore_startup_parameters = extra_float_digits,options',
    `admin_users = ${user}`,
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    `pidfile = ${join(dir, 'pgbouncer.pid')}`,
    '',
  ].join('\n'));
  const identity = runAs();
  if (identity) {
    chownSync(dir, identity.uid, identity.gid);
    for (const file of ['userlist.txt', 'pgbouncer.ini']) chownSync(join(dir, file), identity.uid, identity.gid);
  }
  // A watchdog shell: pgbouncer stops on SIGTERM, and also when this process
  // is gone (a test worker killed without running its afterAll).
  const child: ChildProcess = spawn('sh', ['-c', WATCHDOG, 'pgbouncer-watchdog', binary(), join(dir, 'pgbouncer.ini'), String(process.pid)], {
    stdio: ['ignore', 'pipe', 'pipe'], ...(identity ?? {}),
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const pooled = (url: string) => {
    const next = new URL(url);
    next.hostname = '127.0.0.1';
    next.port = String(port);
    return next.toString();
  };
  const admin = pooled(Object.assign(new URL(ADMIN_URL), { pathname: '/pgbouncer' }).toString());
  const show = async (what: 'POOLS' | 'STATS') => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      return (await client.query(`SHOW ${what}`)).rows as Array<Record<string, unknown>>;
    } finally {
      await client.end();
    }
  };

  // Ready once a query passes through it.
  const deadline = Date.now() + 10_000;
  for (;;) {
    const client = new pg.Client({ connectionString: pooled(ADMIN_URL) });
    try {
      await client.connect();
      await client.query('select 1');
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`pgbouncer did not start: ${(error as Error).message}\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  return {
    port,
    pooled,
    show,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
    kill() {
      if (child.exitCode === null) child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
