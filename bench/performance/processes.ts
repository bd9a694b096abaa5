/**
 * Every system a benchmark compares runs in a process of its own (never in
 * the bench process, whose event loop drives the load and the clock), and
 * its CPU is counted apart: the process's own (Linux /proc) plus that of the
 * Postgres backends serving it, told apart by database and application_name.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import pg from 'pg';
import { ADMIN_URL } from '../../test/helpers/db.ts';
import { processCpuMs } from '../cpu.ts';

/** The application_name of the bench's own connections (seeding, counting): never counted as a system's CPU. */
export const BENCH_APPLICATION = 'bench';

export interface Child {
  readonly pid: number;
  /** What the child printed on its first line after `ready ` (a URL, or nothing). */
  readonly ready: string;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 120_000;

/**
 * Spawns `args` (node arguments) and waits until it is ready: its first
 * stdout line `ready [detail]` (the child has started all it needs and is
 * idle), or, given `readyUrl`, a 200 from it (`ready` is then that URL's origin).
 */
export function spawnChild(args: readonly string[], env: NodeJS.ProcessEnv, label: string, readyUrl?: string): Promise<Child> {
  const child = spawn(process.execPath, args, { env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let settled = false;
  child.stderr!.on('data', (chunk: Buffer) => {
    // Before it is ready its output is kept for the error; afterwards it is passed on (a floor's failed statement).
    if (settled) return void process.stderr.write(`  [${label}] ${chunk.toString()}`);
    stderr += chunk.toString();
    if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${label}: not ready after ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n${stderr}`));
    };
    const ready = (detail: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ pid: child.pid!, ready: detail, stop: () => stopChild(child, exited) });
    };
    child.once('exit', (code, signal) => {
      if (!settled) fail(new Error(`${label} exited with ${code ?? signal} before it was ready`));
      // A child that fails after its start says so: a drain that stops progressing must not be silent.
      else if (code !== 0 && signal !== 'SIGTERM') process.stderr.write(`  ${label} exited with ${code ?? signal}\n${stderr}`);
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      if (settled || readyUrl) return;
      output += chunk.toString();
      const line = /^ready ?(.*)$/m.exec(output);
      if (line) ready(line[1].trim());
    });
    if (readyUrl) void poll(readyUrl, () => settled).then(() => ready(new URL(readyUrl).origin));
  });
}

/** GETs `url` every 20 ms until a 200 (a process we spawned: polling it is the only way to know). */
async function poll(url: string, done: () => boolean): Promise<void> {
  while (!done()) {
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((wake) => setTimeout(wake, 20));
  }
}

/** A free TCP port on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

async function stopChild(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Which Postgres backends belong to a system: those of its database, or of its application_name there. */
export interface Backends {
  readonly database: string;
  readonly application?: string;
}

/** Samples the CPU of processes and of Postgres backends, over a connection of its own. */
export class CpuMeter {
  private constructor(private readonly client: pg.Client) {}

  static async open(): Promise<CpuMeter> {
    const client = new pg.Client({ connectionString: ADMIN_URL, application_name: BENCH_APPLICATION });
    await client.connect();
    return new CpuMeter(client);
  }

  /** CPU ms by pid, now: of `pids` and of the backends `backends` selects (the bench's own excluded). */
  async sample(pids: readonly number[], backends: Backends): Promise<Map<number, number>> {
    const { rows } = await this.client.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = $1 and ($2::text is null or application_name like $2)
          and application_name <> $3 and pid <> pg_backend_pid()`,
      [backends.database, backends.application ?? null, BENCH_APPLICATION]);
    const sampled = new Map<number, number>();
    for (const pid of [...pids, ...rows.map((row) => row.pid)]) {
      const ms = processCpuMs(pid);
      if (ms !== null) sampled.set(pid, ms);
    }
    return sampled;
  }

  close(): Promise<void> {
    return this.client.end();
  }
}

/** CPU ms spent between two samples (a backend that started in between counts whole). */
export function cpuSpent(before: Map<number, number>, after: Map<number, number>): number {
  let spent = 0;
  for (const [pid, ms] of after) spent += ms - (before.get(pid) ?? 0);
  return spent;
}
