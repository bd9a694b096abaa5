/**
 * kill -9 of a `svc-gen start` process in the middle of a run: step one has
 * committed, step two (an http request) is in flight. After a restart the
 * run resumes at step two: step one is not repeated, step two is sent again
 * with the same Idempotency-Key (at least once), step three runs once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture } from '../helpers/service.ts';
import { createTestDatabase, queryOnce, type TestDatabase } from '../helpers/db.ts';
import { freePort, startCliServer } from '../helpers/cli.ts';
import { call, FLOW, receiver, watchRun } from './helpers.ts';

const ADMIN = { email: 'crash@workflows.test', password: 'Crash1234pass' };

let database: TestDatabase;
let dir: string;

beforeAll(async () => {
  database = await createTestDatabase('svc_wfc');
  dir = await buildFixture(FLOW);
});
afterAll(() => database.drop());

const startServer = (port: number) => startCliServer(dir, {
  databaseUrl: database.url, port, admin: ADMIN,
  env: {
    SVC_WORKFLOW_HTTP_ALLOW: 'http://127.0.0.1:47311', SVC_WORKFLOW_LEASE_SECS: '2', SVC_JOB_RECLAIM_INTERVAL: '0.5', SVC_WORKFLOW_POLL_MS: '200',
  },
});

const query = <T>(sql: string, values?: unknown[]) => queryOnce<T>(database.url, sql, values);

describe('a run under kill -9', { timeout: 120_000 }, () => {
  it('resumes at its first unfinished step and never repeats a finished one', async () => {
    // The first request hangs (the process dies while it is in flight); the repeat is answered.
    const hook = await receiver(47311, (_r, n) => (n === 1 ? 'hang' : { status: 200, body: { ok: true } }));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    let server = await startServer(port);
    try {
      const login = await call(base, 'POST', '/auth/login', null, ADMIN);
      const token = login.body.token as string;
      const inFlight = hook.arrived();
      const started = await call(base, 'POST', '/workflows/crashy/run', token, { input: { tag: 'k9' } });
      expect(started.status).toBe(202);
      const runId = started.body.runId as string;
      await inFlight;
      server.child.kill('SIGKILL');
      expect(await server.exited()).toBeNull(); // killed by the signal, not stopped

      const before = await query<{ step_id: string; status: string; attempts: number }>(
        'select step_id, status, attempts from svc_workflow_steps where run_id = $1 order by position', [runId]);
      expect(before).toEqual([{ step_id: 'one', status: 'succeeded', attempts: 1 }, { step_id: 'hook', status: 'running', attempts: 1 }]);

      server = await startServer(port);
      const again = (await call(base, 'POST', '/auth/login', null, ADMIN)).body.token as string;
      const done = await watchRun(base, again, runId, (r) => r.status === 'succeeded' || r.status === 'failed', 30_000);
      expect(done.status).toBe('succeeded');
      expect(done.steps.map((s: any) => [s.id, s.status, s.attempts])).toEqual([['one', 'succeeded', 1], ['hook', 'succeeded', 2], ['three', 'succeeded', 1]]);
      const orders = await query<{ title: string; n: number }>(`select title, count(*)::int as n from "order" group by title order by title`);
      expect(orders).toEqual([{ title: 'step one k9', n: 1 }, { title: 'step three k9', n: 1 }]);
      // Sent twice (at least once), with one key: a receiver can drop the repeat.
      expect(hook.received).toHaveLength(2);
      expect(new Set(hook.received.map((r) => r.headers['idempotency-key']))).toEqual(new Set([`${runId}:hook`]));
      expect(hook.received[1].body).toEqual({ tag: 'k9', order: done.steps[0].output.result.id });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited();
      await hook.close();
    }
  });
});
