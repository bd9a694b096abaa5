/**
 * A worker on the per-job routes (per-job-worker.ts) run to a target, for
 * bench/performance/profile.ts's `complete` mode. The drains that compare job
 * systems are drain.ts's.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface PerJobResult {
  readonly ms: number;
  readonly completed: number;
  /** Latency of POST /jobs/{id}/complete, in ms. */
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** Runs per-job-worker.ts in a process of its own until `target` jobs are completed. */
export function perJobWorker(baseUrl: string, token: string, target: number, inFlight: number): Promise<PerJobResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'per-job-worker.ts')], {
    env: { ...process.env, NODE_OPTIONS: '', BASE_URL: baseUrl, WORKER_TOKEN: token, TARGET: String(target), IN_FLIGHT: String(inFlight) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(output) as PerJobResult) : reject(new Error(`per-job worker exited with ${code}: ${output}`))));
  });
}
