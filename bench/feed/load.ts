/**
 * autocannon in a child process (as bench/records/load.ts), reporting the
 * status codes too: a run whose responses are errors must say so.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import type { LoadResult, LoadSpec } from '../records/load.ts';

export type { LoadResult } from '../records/load.ts';

const WORKER = `
const spec = JSON.parse(process.env.BENCH_LOAD);
const autocannon = require(spec.autocannon);
autocannon({
  url: spec.url, connections: spec.connections, duration: spec.seconds,
  method: 'POST', headers: { 'content-type': 'application/json', ...spec.headers }, body: spec.body,
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
      const result = JSON.parse(output) as LoadResult & { statusCodes?: Record<string, unknown> };
      if (result.non2xx > 0 || result.errors > 0) {
        process.stderr.write(`  ${spec.url}: ${result.errors} errors, ${result.non2xx} non-2xx, statuses ${JSON.stringify(result.statusCodes)}\n`);
      }
      resolve(result);
    });
  });
}
