/**
 * A statement of a request that runs past SVC_DB_STATEMENT_TIMEOUT_MS is
 * cancelled by Postgres itself: the connection goes back to the pool instead
 * of staying busy after the client was answered (the GraphQL time limit alone
 * answers the client and leaves the statement running), and the client gets a
 * 503 with Retry-After. Work that may rightly take long (migrations, waits for
 * another instance's lock) lifts the limit. A table lock held by the test
 * makes statements wait as long as it likes.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../runtime/db/index.ts';
import { createTestDatabase, queryOnce, type TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../auth/helpers.ts';

const TIMEOUT_MS = 400;
let database: TestDatabase;
let service: TestService;
let token: string;

beforeAll(async () => {
  database = await createTestDatabase();
  service = await startTestService({ database, env: { SVC_DB_STATEMENT_TIMEOUT_MS: String(TIMEOUT_MS) } });
  token = await service.token({ role: 'Admin', userId: 'timeout-admin' });
});
afterAll(async () => {
  await service?.close();
  await database?.drop();
});

/** Holds `lock` in an open transaction of its own until released. */
async function holding(lock: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query('begin');
  await client.query(lock);
  let held = true;
  return {
    async release() {
      if (!held) return;
      held = false;
      await client.query('rollback');
      await client.end();
    },
  };
}

/**
 * The two requests' statements (the records read, the enqueue) still waiting on a lock. Background
 * statements (the jobs sweep, the projection refresh) may wait on the same lock for up to the limit too.
 */
const waiting = async () => (await queryOnce<{ n: number }>(database.url,
  `select count(*)::int as n from pg_stat_activity
    where datname = current_database() and application_name = 'svc-gen' and wait_event_type = 'Lock'
      and (query like '%from "project" t %' or query like '%insert into svc_jobs%')`))[0].n;

describe('statement timeout', () => {
  it('cancels a request statement that waits past the limit: 503 with Retry-After, nothing left waiting', async () => {
    const records = { query: '{ records(model: "Project") }' };
    expect((await call(service.url, 'POST', '/graphql', { token, body: records })).status).toBe(200);
    const lock = await holding('lock table project, svc_jobs in access exclusive mode');
    try {
      const started = performance.now();
      const reading = call(service.url, 'POST', '/graphql', { token, body: records });
      // The read is seen waiting on the lock (Postgres' own view: also what shows `waiting` finds it)...
      const deadline = Date.now() + 5_000;
      let seen = 0;
      while (seen === 0 && Date.now() < deadline) seen = await waiting();
      expect(seen).toBe(1);
      // ...and is cancelled at the limit.
      const read = await reading;
      const enqueue = await call(service.url, 'POST', '/jobs', { token, body: { queue: 'timeout', kind: 'k' } });
      expect(performance.now() - started).toBeGreaterThanOrEqual(2 * TIMEOUT_MS * 0.9);
      expect(read.status, JSON.stringify(read.body)).toBe(503);
      expect(read.body.errors).toEqual([expect.objectContaining({
        message: 'the request exceeded the database time limit', extensions: { code: 'INTERNAL_ERROR' },
      })]);
      expect(enqueue.status).toBe(503);
      expect(enqueue.body).toMatchObject({ code: 'UNAVAILABLE', error: 'the request exceeded the database time limit' });
      for (const reply of [read, enqueue]) expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
      // Cancelled by Postgres, not merely answered: no statement of the pool still waits on the lock.
      expect(await waiting()).toBe(0);
    } finally {
      await lock.release();
    }
    expect((await call(service.url, 'POST', '/graphql', { token, body: records })).status).toBe(200);
  });

  it('lets migrations wait past the limit for another instance that holds the migration lock', async () => {
    const opened = await openDatabase({ url: database.url, statementTimeoutMs: TIMEOUT_MS, applicationName: 'svc-gen-timeout-test' });
    const lock = await holding('select pg_advisory_xact_lock(7305648312001)');
    try {
      const migrating = migrate(opened.db, []);
      // Release once the migration has waited twice the limit (Postgres' own clock, read from its view).
      const deadline = Date.now() + 10_000;
      for (;;) {
        const [row] = await queryOnce<{ ms: number | null }>(database.url,
          `select max(extract(epoch from now() - query_start) * 1000)::float8 as ms from pg_stat_activity
            where application_name = 'svc-gen-timeout-test' and wait_event_type = 'Lock'`);
        if ((row.ms ?? 0) > 2 * TIMEOUT_MS || Date.now() > deadline) break;
      }
      await lock.release();
      await expect(migrating).resolves.toEqual([]);
      // The connection went back to the pool with the limit in force again.
      await expect(opened.db.one('select pg_sleep($1)', [(2 * TIMEOUT_MS) / 1000])).rejects.toMatchObject({ code: '57014' });
    } finally {
      await opened.close();
    }
  });
});
