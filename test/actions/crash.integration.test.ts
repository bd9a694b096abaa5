/**
 * kill -9 of a `svc-gen start` process under a load of bound writes (creates
 * that enqueue `scoreLead` in their one statement, updates that enqueue
 * `celebrate` in their transaction): every committed bound write has exactly
 * one job, and no job exists for a write that did not commit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture } from '../helpers/service.ts';
import { freePort, startCliServer } from '../helpers/cli.ts';
import { ACTIONS_FIXTURE, createActionsDatabase } from './helpers.ts';
import { queryOnce, type TestDatabase } from '../helpers/db.ts';

const ADMIN = { email: 'crash@actions.test', password: 'Crash1234pass' };

let database: TestDatabase;
let dir: string;

beforeAll(async () => {
  database = await createActionsDatabase();
  dir = await buildFixture(ACTIONS_FIXTURE);
});
afterAll(() => database.drop());

const startServer = (port: number) => startCliServer(dir, { databaseUrl: database.url, port, admin: ADMIN });

const query = <T>(sql: string, values?: unknown[]) => queryOnce<T>(database.url, sql, values);

describe('actions under kill -9', { timeout: 120_000 }, () => {
  it('every committed bound write has exactly one job, and every job its committed write', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = await startServer(port);
    const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const { token } = (await login.json()) as { token: string };
    const gql = (q: string, variables: object) => fetch(`${base}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: q, variables }),
    }).then((r) => r.json() as Promise<any>);

    const acknowledged = new Set<string>();
    let stop = false;
    let enough: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (enough = resolve));
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const created = await gql('mutation($d: JSON!) { create(model: "Lead", data: $d) }', { d: { name: `lead-${w}-${i}`, stage: i % 2 ? 'hot' : 'new' } });
          const id = created.data?.create?.id;
          if (!id) continue;
          acknowledged.add(id);
          await gql('mutation($id: ID!, $d: JSON!) { update(model: "Lead", id: $id, data: $d) }', { id, d: { stage: 'won' } });
          if (acknowledged.size >= 80) enough();
        } catch {
          return; // the server is gone
        }
      }
    };
    const writers = Array.from({ length: 6 }, (_, w) => writer(w));
    await reached;
    server.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    expect(await server.exited()).toBeNull(); // killed by a signal, not stopped

    // The bound writes that committed: each Created (scoreLead; hotLead for a hot one) and each Updated to won (celebrate).
    const expected = await query<{ key: string }>(`
      select e.id || ':scoreLead' as key from svc_events e where e.stream_type = 'Lead' and e.event_type = 'Created'
      union all
      select e.id || ':hotLead' from svc_events e where e.stream_type = 'Lead' and e.event_type = 'Created' and e.data->>'stage' = 'hot'
      union all
      select e.id || ':celebrate' from svc_events e where e.stream_type = 'Lead' and e.event_type = 'Updated' and e.data->>'stage' = 'won'`);
    const jobs = await query<{ key: string; n: number }>(`select idempotency_key as key, count(*)::int as n from svc_jobs where queue = 'actions' group by 1`);
    expect(jobs.every((j) => j.n === 1)).toBe(true);
    expect(jobs.map((j) => j.key).sort()).toEqual(expected.map((e) => e.key).sort());
    // Every acknowledged create committed; the load was real.
    const leads = await query<{ id: string }>(`select id from "lead"`);
    for (const id of acknowledged) expect(leads.some((l) => l.id === id)).toBe(true);
    expect(leads.length).toBeGreaterThanOrEqual(80);
    expect(expected.length).toBeGreaterThan(leads.length * 2);
  });
});
