/**
 * The job systems a drain compares, as the bench process sees them: how to
 * queue jobs for each in ONE commit (its workers, idle and polling, see them
 * all at once: a standing start), how many are left (counted in its own
 * tables: the one clock, observed in the database), and how to start its
 * workers (consumer.ts, in a process of their own).
 */
import { join } from 'node:path';
import pg from 'pg';
import { newId } from '../../runtime/ids.ts';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/db.ts';
import { INSTALLED_WORKER_MODULE, type InstalledService } from '../performance/installed.ts';
import { BENCH_APPLICATION, type Backends } from '../performance/processes.ts';

export interface JobSystem {
  /** The row's label, with its settings. */
  readonly name: string;
  /** consumer.ts's environment (SYSTEM and its settings). */
  readonly consumer: Record<string, string>;
  /** Processes of the system besides its consumer (svc-gen's server). */
  readonly servers: readonly number[];
  readonly backends: Backends;
  /** Queues `count` no-op jobs in one transaction; `beforeCommit` runs last inside it. */
  seed(count: number, beforeCommit: () => Promise<void>): Promise<void>;
  /** Jobs not completed yet. */
  remaining(): Promise<number>;
  /** Between drains: completed jobs deleted, the table vacuumed (each drain starts from the same table). */
  tidy(): Promise<void>;
  close(): Promise<void>;
}

const CONSUMER = join(import.meta.dirname, 'consumer.ts');
export const consumerArgs = ['--import', 'tsx', CONSUMER];

/** One transaction on a client of `pool`: `work`, then `beforeCommit`, then COMMIT. */
async function inOneCommit(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<void>, beforeCommit: () => Promise<void>) {
  const client = await pool.connect();
  try {
    await client.query('begin');
    await work(client);
    await beforeCommit();
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.release();
  }
}

const count = async (pool: pg.Pool, text: string) => (await pool.query<{ n: number }>(text)).rows[0].n;

/**
 * svc-gen's jobs, on an installed server: rows and their JobEnqueued events
 * written as POST /jobs would (time-ordered ids), drained over HTTP by
 * `consumer`, from `server` (the service itself unless given: the per-job floor).
 */
export function svcJobs(
  service: InstalledService, name: string, consumer: Record<string, string>, server: { url: string; pid: number } = service,
): JobSystem {
  const { pool } = service;
  return {
    name,
    consumer: { WORKER_MODULE: INSTALLED_WORKER_MODULE, BASE_URL: server.url, ...consumer },
    servers: [server.pid],
    backends: { database: service.database.name },
    seed: (jobs, beforeCommit) => inOneCommit(pool, async (client) => {
      const [jobPrefix, eventPrefix] = [newId().slice(0, 16), newId().slice(0, 16)]; // + 10 digits: 26, a ULID's length
      await client.query(`insert into svc_jobs (id, queue, kind, payload, max_attempts, priority, tenant_id, created_by)
        select $1 || lpad(i::text, 10, '0'), 'bench', 'noop', jsonb_build_object('n', i), 5, 0, null, 'bench'
          from generate_series(1, $2::int) i`, [jobPrefix, jobs]);
      await client.query(`insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
        select $2 || lpad(i::text, 10, '0'), 'Job', $1 || lpad(i::text, 10, '0'), 1, 'JobEnqueued',
               jsonb_build_object('queue', 'bench', 'kind', 'noop', 'priority', 0, 'maxAttempts', 5), 'bench', ''
          from generate_series(1, $3::int) i`, [jobPrefix, eventPrefix, jobs]);
    }, beforeCommit),
    remaining: () => count(pool, `select ((select count(*) from svc_jobs where queue = 'bench' and status = 'queued')
      + (select count(*) from svc_jobs where status = 'leased'))::int as n`),
    async tidy() {
      await pool.query(`delete from svc_jobs where queue = 'bench' and status = 'succeeded'`);
      await pool.query('vacuum analyze svc_jobs');
    },
    close: async () => undefined, // the service is the caller's
  };
}

async function ownDatabase(prefix: string): Promise<{ database: TestDatabase; pool: pg.Pool }> {
  const database = await createTestDatabase(prefix);
  const pool = new pg.Pool({ connectionString: database.url, max: 2, application_name: BENCH_APPLICATION });
  pool.on('error', () => undefined); // an idle connection ended by the database's drop at teardown
  return { database, pool };
}

/** graphile-worker on a database of its own, its jobs queued by its SQL API (`add_jobs`, which notifies the workers). */
export async function graphileJobs(name: string, consumer: Record<string, string>): Promise<JobSystem> {
  const { database, pool } = await ownDatabase('bench_graphile');
  const { makeWorkerUtils } = await import('graphile-worker');
  const utils = await makeWorkerUtils({ connectionString: database.url });
  await utils.migrate();
  await utils.release();
  return {
    name,
    consumer: { DATABASE_URL: database.url, ...consumer },
    servers: [],
    backends: { database: database.name },
    seed: (jobs, beforeCommit) => inOneCommit(pool, async (client) => {
      await client.query(`select graphile_worker.add_jobs(array(
        select json_populate_record(null::graphile_worker.job_spec, json_build_object('identifier', 'noop', 'payload', json_build_object('n', i)))
          from generate_series(1, $1::int) i))`, [jobs]);
    }, beforeCommit),
    remaining: () => count(pool, 'select count(*)::int as n from graphile_worker._private_jobs'), // a completed job is deleted
    tidy: async () => void (await pool.query('vacuum analyze graphile_worker._private_jobs')),
    async close() {
      await pool.end();
      await database.drop();
    },
  };
}

/** pg-boss on a database of its own; queue `bench` notifies its workers of new jobs (its `notify` option). */
export async function pgBossJobs(name: string, consumer: Record<string, string>): Promise<JobSystem> {
  const { database, pool } = await ownDatabase('bench_pgboss');
  const { PgBoss } = await import('pg-boss');
  // The bench's own instance only queues (pg-boss's insert() on the seeding transaction): no workers, no maintenance.
  const seeder = new PgBoss({ connectionString: database.url, schedule: false, supervise: false, max: 2, application_name: BENCH_APPLICATION });
  seeder.on('error', () => undefined);
  await seeder.start();
  await seeder.createQueue('bench', { notify: true });
  return {
    name,
    consumer: { DATABASE_URL: database.url, ...consumer },
    servers: [],
    backends: { database: database.name },
    seed: (jobs, beforeCommit) => inOneCommit(pool, async (client) => {
      const db = { executeSql: (text: string, values?: unknown[]) => client.query(text, values) };
      for (let at = 0; at < jobs; at += 10_000) {
        await seeder.insert('bench', Array.from({ length: Math.min(10_000, jobs - at) }, (_, i) => ({ data: { n: at + i } })), { db });
      }
    }, beforeCommit),
    remaining: () => count(pool, `select count(*)::int as n from pgboss.job where name = 'bench' and state in ('created', 'retry', 'active')`),
    async tidy() {
      await pool.query(`delete from pgboss.job where name = 'bench' and state = 'completed'`);
      await pool.query('vacuum analyze pgboss.job');
    },
    async close() {
      await new Promise<void>((resolve) => {
        seeder.once('stopped', () => resolve());
        void seeder.stop({ graceful: false, close: true });
      });
      await pool.end();
      await database.drop();
    },
  };
}
