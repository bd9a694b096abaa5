/**
 * A private primary and a real streaming replica of it, each on its own port,
 * in a temporary folder, stopped and removed by stop().
 *
 * The shared server on 5432 allows no replication connections (its pg_hba has
 * no `replication` entry) and its configuration is not ours to change, so the
 * primary is a cluster of our own (initdb), and the replica is made from it with
 * `pg_basebackup -R`, as one would from any primary. Postgres refuses to run as
 * root: when the test runs as root, both run as the `postgres` user.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './cli.ts';

const BIN = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin'].find((dir) => existsSync(join(dir, 'pg_ctl')));

export interface ReplicaPair {
  readonly primaryUrl: string;
  readonly replicaUrl: string;
  /** Runs `sql` on the replica (e.g. `select pg_wal_replay_pause()`). */
  onReplica(sql: string): Promise<unknown[]>;
  stop(): Promise<void>;
}

function identity(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout.trim());
  return { uid: id('-u'), gid: id('-g') };
}

function run(command: string, args: string[], as: { uid: number; gid: number } | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(BIN!, command), args, { stdio: ['ignore', 'pipe', 'pipe'], ...(as ?? {}), env: { ...process.env, LC_ALL: 'C' } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited ${code}:\n${output}`))));
  });
}

async function query(url: string, sql: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

export async function startReplicaPair(): Promise<ReplicaPair> {
  if (!BIN) throw new Error('Postgres server binaries (pg_ctl, initdb, pg_basebackup) not found under /usr/lib/postgresql');
  const as = identity();
  const dir = mkdtempSync(join(tmpdir(), 'svc-replica-'));
  if (as) chownSync(dir, as.uid, as.gid);
  const primary = join(dir, 'primary');
  const replica = join(dir, 'replica');
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const options = (port: number) =>
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c shared_buffers=16MB -c max_connections=40 -c fsync=off`;
  const started: string[] = [];
  // A watchdog stops both servers and removes the folder if this process dies
  // without calling stop() (a killed test worker must not leave servers behind).
  const pgCtl = join(BIN, 'pg_ctl');
  const watchdog = spawn('sh', ['-c', `while [ -d "/proc/$1" ]; do sleep 0.5; done
    "$2" -D "$3/replica" -m immediate stop; "$2" -D "$3/primary" -m immediate stop; rm -rf "$3"`,
  'replica-watchdog', String(process.pid), pgCtl, dir], { stdio: 'ignore', detached: true, ...(as ?? {}) });
  watchdog.unref();
  const stop = async () => {
    watchdog.kill('SIGKILL');
    for (const data of started.reverse()) await run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'], as).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // initdb's default pg_hba trusts replication connections from 127.0.0.1.
    await run('initdb', ['-D', primary, '-U', 'postgres', '-A', 'trust', '--no-sync'], as);
    await run('pg_ctl', ['-D', primary, '-o', options(primaryPort), '-l', join(dir, 'primary.log'), '-w', 'start'], as);
    started.push(primary);
    await run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replica, '-R', '-X', 'stream'], as);
    await run('pg_ctl', ['-D', replica, '-o', options(replicaPort), '-l', join(dir, 'replica.log'), '-w', 'start'], as);
    started.push(replica);
  } catch (error) {
    await stop();
    throw error;
  }
  const primaryUrl = `postgres://postgres@127.0.0.1:${primaryPort}/postgres`;
  const replicaUrl = `postgres://postgres@127.0.0.1:${replicaPort}/postgres`;
  const [{ recovering }] = (await query(replicaUrl, 'select pg_is_in_recovery() as recovering')) as Array<{ recovering: boolean }>;
  if (!recovering) {
    await stop();
    throw new Error('the replica is not in recovery');
  }
  return { primaryUrl, replicaUrl, onReplica: (sql) => query(replicaUrl, sql), stop };
}
