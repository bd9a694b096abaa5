/**
 * The baselines, in process on the same Postgres, each on a fresh database:
 * pg-boss (batches of 50) and graphile-worker (concurrency 8), both with a
 * no-op handler.
 */
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { Logger, makeWorkerUtils, run } from 'graphile-worker';

const silent = new Logger(() => () => undefined);
import { pool, waitUntil } from './measure.ts';

export interface Baseline {
  enqueue(count: number, concurrency: number): Promise<number>;
  bulk(count: number): Promise<void>;
  drain(count: number): Promise<number>;
  close(): Promise<void>;
}

export async function startPgBoss(url: string): Promise<Baseline> {
  const boss = new PgBoss({ connectionString: url, schedule: false, supervise: false, max: 20 });
  boss.on('error', () => undefined);
  await boss.start();
  for (const name of ['bench', 'enqueue-bench']) await boss.createQueue(name);
  return {
    async enqueue(count, concurrency) {
      const started = performance.now();
      await pool(count, concurrency, async (n) => void (await boss.send('enqueue-bench', { n })));
      return performance.now() - started;
    },
    async bulk(count) {
      for (let at = 0; at < count; at += 1000) {
        await boss.insert('bench', Array.from({ length: Math.min(1000, count - at) }, (_, i) => ({ data: { n: at + i } })));
      }
    },
    async drain(count) {
      let done = 0;
      const started = performance.now();
      await boss.work('bench', { batchSize: 50, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true }, async (jobs) => {
        done += jobs.length;
      });
      await waitUntil(() => done >= count, 110_000);
      const ms = performance.now() - started;
      await boss.offWork('bench'); // a next drain starts its own worker
      return ms;
    },
    // stop() returns before the pool is closed; dropping the database earlier would kill live connections.
    close: () => new Promise<void>((resolve) => {
      boss.once('stopped', () => resolve());
      void boss.stop({ graceful: false, close: true });
    }),
  };
}

export async function startGraphile(url: string): Promise<Baseline> {
  // One pool of our own for the utilities and the runner, ended before the database is dropped: the runner's own
  // pool outlived runner.stop(), and the drop's termination of its idle connection was an unhandled 'error'.
  const pgPool = new pg.Pool({ connectionString: url, max: 10 });
  pgPool.on('error', () => undefined);
  const utils = await makeWorkerUtils({ pgPool, logger: silent });
  await utils.migrate();
  let done = 0;
  return {
    async enqueue(count, concurrency) {
      const started = performance.now();
      await pool(count, concurrency, async (n) => void (await utils.addJob('enqueue-noop', { n })));
      return performance.now() - started;
    },
    async bulk(count) {
      for (let at = 0; at < count; at += 1000) {
        await utils.addJobs(Array.from({ length: Math.min(1000, count - at) }, (_, i) => ({ identifier: 'noop', payload: { n: at + i } })));
      }
    },
    async drain(count) {
      done = 0;
      const started = performance.now();
      const runner = await run({
        pgPool, concurrency: 8, noHandleSignals: true, pollInterval: 1000,
        taskList: { noop: async () => void done++ },
        logger: silent,
      });
      await waitUntil(() => done >= count, 110_000);
      const ms = performance.now() - started;
      await runner.stop();
      return ms;
    },
    close: async () => {
      await utils.release();
      await pgPool.end();
    },
  };
}
