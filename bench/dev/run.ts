/**
 * `npm run bench:dev`: the figures of the dev loop (issue 17), on the CRM
 * fixture copied into a fresh folder, embedded Postgres:
 *
 * - cold: `svc-gen dev` with no `.svc/` to the first 200 from /ready;
 * - warm: the same again with `.svc/` kept (targets: 3 s);
 * - reload: after a save that adds a model, from the end of the 2 s debounce to
 *   /meta/schema listing the model (target: 1 s);
 * - refused: requests that failed (connection refused or reset, or a status
 *   other than 200) out of those sent by a few clients in a tight loop from
 *   the save until the new schema is served (target: 0).
 *
 * Each figure is the median of BENCH_RUNS runs (default 3), with the process's
 * CPU seconds beside the wall time: on a shared machine the wall time moves
 * with the neighbours, CPU time barely does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { processCpuMs } from '../cpu.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'svc-gen.mjs');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const CLIENTS = 4;
const DEBOUNCE_MS = 2000;

interface Dev {
  readonly child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => done(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function startDev(cwd: string, port: number): Dev {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', SVC_LOG_LEVEL: 'info' };
  for (const key of Object.keys(env)) if (/^(DATABASE_URL|ADMIN_|VITEST)/.test(key)) delete env[key];
  const child = spawn(process.execPath, [BIN, 'dev', '--schema', 'schema.ts'], { cwd, env });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return { child, output: () => output, stop: () => (child.kill('SIGTERM'), exited) };
}

/** Polls until `check` passes (an external process: polling with a deadline is the only way to see it). */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string, dev: Dev): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms\n${dev.output()}`);
}

async function ready(base: string): Promise<boolean> {
  return (await fetch(`${base}/ready`)).status === 200;
}

async function models(base: string): Promise<string[]> {
  const meta = (await (await fetch(`${base}/meta/schema`)).json()) as { models: { name: string }[] };
  return meta.models.map((m) => m.name);
}

async function start(work: string): Promise<{ dev: Dev; base: string; seconds: number; cpu: number }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const begun = performance.now();
  const dev = startDev(work, port);
  await until(() => ready(base), 120_000, '/ready', dev);
  return { dev, base, seconds: (performance.now() - begun) / 1000, cpu: (processCpuMs(dev.child.pid!) ?? 0) / 1000 };
}

/** Clients in a tight loop until `stop`; counts answers that are not 200. */
function hammer(base: string): { stop(): Promise<{ sent: number; refused: number; errors: string[] }> } {
  let running = true;
  let sent = 0;
  let refused = 0;
  const errors: string[] = [];
  const client = async () => {
    while (running) {
      sent += 1;
      try {
        const response = await fetch(`${base}/health`);
        await response.arrayBuffer();
        if (response.status !== 200) {
          refused += 1;
          errors.push(`status ${response.status}`);
        }
      } catch (error) {
        refused += 1;
        errors.push(String((error as Error).cause ?? error));
      }
    }
  };
  const clients = Array.from({ length: CLIENTS }, client);
  return {
    async stop() {
      running = false;
      await Promise.all(clients);
      return { sent, refused, errors: [...new Set(errors)] };
    },
  };
}

async function oneRun(run: number) {
  const work = mkdtempSync(join(tmpdir(), 'svc-bench-dev-'));
  const schema = join(work, 'schema.ts');
  copyFileSync(join(ROOT, 'fixtures', 'crm', 'schema.ts'), schema);
  try {
    const cold = await start(work);
    await cold.dev.stop();
    const warm = await start(work);
    // A warm start builds after it serves: save once that build is done, as a person would seconds later.
    await until(async () => warm.dev.output().includes('watching schema.ts'), 60_000, 'the warm build', warm.dev);
    const load = hammer(warm.base);
    const model = `BenchTag${run}`;
    const saved = performance.now();
    appendFileSync(schema, `\nexport interface ${model} {\n  id: string;\n  label: string;\n}\n`);
    await until(async () => (await models(warm.base)).includes(model), 60_000, 'the new model', warm.dev);
    const reload = (performance.now() - saved - DEBOUNCE_MS) / 1000;
    const hammered = await load.stop();
    await warm.dev.stop();
    // The dev process's own account of the reload (build and mount times).
    if (process.env.BENCH_VERBOSE) for (const line of warm.dev.output().split('\n')) if (/rebuilt schema/.test(line)) console.log(line);
    return { cold: cold.seconds, coldCpu: cold.cpu, warm: warm.seconds, warmCpu: warm.cpu, reload, ...hammered };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const results = [];
for (let run = 1; run <= RUNS; run++) results.push(await oneRun(run));
const row = (name: string, values: number[], target: string) =>
  `| ${name.padEnd(38)} | ${median(values).toFixed(2).padStart(7)} | ${values.map((v) => v.toFixed(2)).join(' ').padEnd(20)} | ${target.padEnd(6)} |`;
console.log(`svc-gen dev on fixtures/crm (embedded Postgres), ${RUNS} runs, load average ${(await import('node:os')).loadavg()[0].toFixed(1)}`);
console.log('| figure                                 |  median | runs                 | target |');
console.log('|----------------------------------------|---------|----------------------|--------|');
console.log(row('cold start to /ready (s)', results.map((r) => r.cold), ''));
console.log(row('  CPU of the process meanwhile (s)', results.map((r) => r.coldCpu), ''));
console.log(row('warm start to /ready (s)', results.map((r) => r.warm), '3'));
console.log(row('  CPU of the process meanwhile (s)', results.map((r) => r.warmCpu), ''));
console.log(row('save to new schema, after debounce (s)', results.map((r) => r.reload), '1'));
console.log(row('requests refused during the reload', results.map((r) => r.refused), '0'));
console.log(row('requests sent during the reload', results.map((r) => r.sent), ''));
const errors = [...new Set(results.flatMap((r) => r.errors))];
if (errors.length > 0) console.log(`refusals: ${errors.join('; ')}`);
