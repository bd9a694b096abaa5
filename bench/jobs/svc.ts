/**
 * svc-gen's side of the benchmark: a real server on a fresh database, jobs
 * enqueued over HTTP (POST /jobs) and drained by SDK workers over HTTP.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { mintWorker, startJobsService } from '../../test/jobs/helpers.ts';
import type { TestService } from '../../test/helpers/service.ts';
import { workerStatements } from '../../runtime/jobs/plane.ts';
import { pool } from './measure.ts';

export interface SvcBench {
  readonly service: TestService;
  /** A user JWT (role Viewer) for POST /jobs. */
  readonly jwt: string;
  enqueueHttp(count: number, concurrency: number): Promise<number>;
  enqueueBulk(count: number): Promise<number>;
  /** SDK workers in a child process: ms to acknowledge `count` jobs after the first `warm` (queued beforehand, all of them). */
  drain(count: number, workers: number, capacity: number, warm?: number): Promise<number>;
  /**
   * The statements floor: `workers` loops in this process running the worker
   * plane's own lease and complete statements (the ones the HTTP routes run,
   * JobLeased and JobSucceeded events included) on the pool, no HTTP. What
   * the SDK drain would reach if the hop to the server cost nothing.
   */
  drainStatements(count: number, workers: number, capacity: number): Promise<number>;
  /** A worker on the per-job routes (see per-job-worker.ts): elapsed ms and complete latencies. */
  drainPerJob(count: number, inFlight: number): Promise<PerJobResult>;
  close(): Promise<void>;
}

export async function startSvc(): Promise<SvcBench> {
  const service = await startJobsService({ env: { SVC_LOG_LEVEL: 'error', SVC_DB_POOL_SIZE: '20' } });
  const { token } = await mintWorker(service, ['bench']);
  const jwt = await service.token({ role: 'Viewer', userId: 'bench' });
  return {
    service,
    jwt,
    async enqueueHttp(count, concurrency) {
      const started = performance.now();
      await pool(count, concurrency, async (n) => {
        const response = await fetch(`${service.url}/jobs`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` },
          body: JSON.stringify({ queue: 'enqueue-bench', kind: 'noop', payload: { n } }),
        });
        if (response.status !== 201) throw new Error(`enqueue: ${response.status}`);
        await response.arrayBuffer();
      });
      return performance.now() - started;
    },
    async enqueueBulk(count) {
      const started = performance.now();
      for (let at = 0; at < count; at += 1000) {
        const batch = Array.from({ length: Math.min(1000, count - at) }, (_, i) => ({ queue: 'bench', kind: 'noop', payload: { n: at + i } }));
        await service.ctx.services.jobs.enqueueMany(batch, { actorId: null, tenantId: null });
      }
      return performance.now() - started;
    },
    drain: (count, workers, capacity, warm = 0) => drainInChild(service.url, token, count, workers, capacity, warm),
    async drainStatements(count, workers, capacity) {
      const statements = workerStatements(service.ctx.db, service.ctx.services.events, true);
      if (!statements) throw new Error('the history policy keeps no Job events: no one-statement plane');
      const tokenHash = createHash('sha256').update(token).digest('hex');
      let completed = 0;
      const started = performance.now();
      await Promise.all(Array.from({ length: workers }, async () => {
        while (completed < count) {
          const leased = await statements.lease(tokenHash, { queues: ['bench'], capacity, visibilitySecs: 60 });
          if (!leased.worker) throw new Error('bench worker token refused');
          if (leased.jobs.length === 0) continue;
          const outcome = await statements.complete(tokenHash, leased.jobs.map((job) => ({ id: job.id, leaseId: job.leaseId, result: null })));
          completed += outcome.completed.length;
        }
      }));
      return performance.now() - started;
    },
    drainPerJob: (count, inFlight) => perJobWorker(service.url, token, count, inFlight),
    close: () => service.close(),
  };
}

function drainInChild(baseUrl: string, token: string, target: number, workers: number, capacity: number, warm: number): Promise<number> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'drain-worker.ts')], {
    env: { ...process.env, BASE_URL: baseUrl, WORKER_TOKEN: token, TARGET: String(target), WARM: String(warm),
      WORKERS: String(workers), CAPACITY: String(capacity) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('exit', (code) => {
      const match = /drained ([\d.]+)/.exec(output);
      if (code === 0 && match) resolve(Number(match[1]));
      else reject(new Error(`drain worker exited with ${code}: ${output}`));
    });
  });
}

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
