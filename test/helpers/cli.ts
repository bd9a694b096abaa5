/** Runs the real `svc-gen` command as a child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT, TEST_JWT_SECRET } from './service.ts';

export const BIN = join(REPO_ROOT, 'bin', 'svc-gen.mjs');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Environment for a child: ours minus anything that would change its behaviour. */
export function childEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(env)) {
    if (/^(DATABASE_URL|JWT_SECRET|SVC_|ADMIN_|PORT$|VITEST|NODE_OPTIONS)/.test(key)) delete env[key];
  }
  return { ...env, SVC_LOG_LEVEL: 'info', ...extra };
}

export function runCli(args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(options.env), cwd: options.cwd ?? REPO_ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface Spawned {
  readonly child: ChildProcess;
  output(): string;
  /** Waits for the process to exit (after a signal, say). */
  exited(): Promise<number | null>;
}

export function spawnCli(args: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}): Spawned {
  const child = spawn(process.execPath, [BIN, ...args], { env: childEnv(options.env), cwd: options.cwd ?? REPO_ROOT });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited: () => exit };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers `status` (default 200) or the time is up. */
export async function waitFor(url: string, timeoutMs = 30_000, status = 200): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown = null;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.status === status) return response;
      last = `status ${response.status}`;
    } catch (error) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`timed out waiting for ${url}: ${String(last)}`);
}

/** Waits for a spawned server's `path`; on timeout the error carries the server's output. */
export async function waitForServer(server: Spawned, url: string, timeoutMs = 45_000): Promise<Response> {
  try {
    return await waitFor(url, timeoutMs);
  } catch (error) {
    throw new Error(`${(error as Error).message}\n--- server output ---\n${server.output()}`);
  }
}

export interface CliServerOptions {
  readonly databaseUrl: string;
  readonly port: number;
  /** Seeded as the first admin (ADMIN_EMAIL, ADMIN_PASSWORD). */
  readonly admin: { readonly email: string; readonly password: string };
  readonly env?: Record<string, string | undefined>;
}

/** `svc-gen start DIR` as an operator runs it (cheap argon2, no rate limit); resolves once /ready answers 200. */
export async function startCliServer(dir: string, options: CliServerOptions): Promise<Spawned> {
  const server = spawnCli(['start', dir], {
    env: {
      DATABASE_URL: options.databaseUrl, PORT: String(options.port), JWT_SECRET: TEST_JWT_SECRET, RATE_LIMIT_RPS: '1000000',
      ADMIN_EMAIL: options.admin.email, ADMIN_PASSWORD: options.admin.password, SVC_ARGON2_MEMORY_KIB: '1024', SVC_ARGON2_TIME_COST: '1',
      ...options.env,
    },
  });
  await waitForServer(server, `http://127.0.0.1:${options.port}/ready`);
  return server;
}
