/**
 * Runs autocannon (programmatically) in a child process, so that the load
 * generator does not share the event loop of the servers it measures.
 * (Not a worker thread: inside one, autocannon reports raw histograms.)
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

export interface LoadSpec {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  readonly body: string;
  readonly headers: Record<string, string>;
  /** Requests per second over all connections (autocannon's overallRate); unset: as fast as the server answers. */
  readonly rate?: number;
}

export interface LoadResult {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  readonly non2xx: number;
}

const WORKER = `
const workerData = JSON.parse(process.env.BENCH_LOAD);
const autocannon = require(workerData.autocannon);
autocannon({
  url: workerData.url, connections: workerData.connections, duration: workerData.seconds, overallRate: workerData.rate,
  method: 'POST', headers: { 'content-type': 'application/json', ...workerData.headers }, body: workerData.body,
}, (error, result) => {
  if (error) throw error;
  process.stdout.write(JSON.stringify({ rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99,
    errors: result.errors + result.timeouts, non2xx: result.non2xx, statusCodes: result.statusCodeStats }));
});`;

const autocannonPath = createRequire(import.meta.url).resolve('autocannon');

export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, BENCH_LOAD: JSON.stringify({ ...spec, autocannon: autocannonPath }) };
    const child = spawn(process.execPath, ['-e', WORKER], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      const { statusCodes, ...result } = JSON.parse(output) as LoadResult & { statusCodes?: Record<string, unknown> };
      // A run whose responses are errors must say which.
      if (result.non2xx > 0 || result.errors > 0) {
        process.stderr.write(`  ${spec.url}: ${result.errors} errors, ${result.non2xx} non-2xx, statuses ${JSON.stringify(statusCodes)}\n`);
      }
      resolve(result);
    });
  });
}
