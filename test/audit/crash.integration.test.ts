/**
 * kill -9 of a `svc-gen start` process under a write load: after a restart,
 * every committed change has exactly one entry and nothing else has one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixture } from '../helpers/service.ts';
import { createTestDatabase, queryOnce, type TestDatabase } from '../helpers/db.ts';
import { freePort, startCliServer } from '../helpers/cli.ts';

const ADMIN = { email: 'crash@audit.test', password: 'Crash1234pass' };

let database: TestDatabase;
let dir: string;

beforeAll(async () => {
  database = await createTestDatabase('svc_aud');
  dir = await buildFixture('crm');
});
afterAll(() => database.drop());

const startServer = (port: number) => startCliServer(dir, { databaseUrl: database.url, port, admin: ADMIN });

async function login(base: string): Promise<string> {
  const response = await fetch(`${base}/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN),
  });
  return ((await response.json()) as any).token;
}

const query = <T>(sql: string, values?: unknown[]) => queryOnce<T>(database.url, sql, values);

describe('audit under kill -9', { timeout: 120_000 }, () => {
  it('one entry per committed create and update, none for the rest', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    let server = await startServer(port);
    const token = await login(base);
    const gql = (query: string, variables: object) => fetch(`${base}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query, variables }),
    }).then((r) => r.json() as Promise<any>);

    const acknowledged = new Set<string>();
    let stop = false;
    let killed: () => void = () => undefined;
    const enough = new Promise<void>((resolve) => (killed = resolve));
    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        try {
          const created = await gql('mutation($d: JSON!) { create(model: "Company", data: $d) }', { d: { name: `c-${w}-${i}`, employees: i } });
          const id = created.data?.create?.id;
          if (!id) continue;
          acknowledged.add(id);
          await gql('mutation($id: ID!, $d: JSON!) { update(model: "Company", id: $id, data: $d) }', { id, d: { employees: i + 1 } });
          if (acknowledged.size >= 60) killed();
        } catch {
          return; // the server is gone
        }
      }
    };
    const writers = Array.from({ length: 6 }, (_, w) => writer(w));
    await enough;
    server.child.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    expect(await server.exited()).toBeNull(); // killed by a signal, not stopped

    server = await startServer(port);
    try {
      const rows = await query<{ id: string; updated: boolean }>(`select id, updated_at > created_at as updated from "company"`);
      const creates = await query<{ entity_id: string; n: number }>(
        `select entity_id, count(*)::int as n from svc_audit where action = 'record.create' group by entity_id`,
      );
      const updates = await query<{ entity_id: string; n: number }>(
        `select entity_id, count(*)::int as n from svc_audit where action = 'record.update' group by entity_id`,
      );
      const updatedEvents = await query<{ stream_id: string; n: number }>(
        `select stream_id, count(*)::int as n from svc_events where event_type = 'Updated' group by stream_id`,
      );
      // Every acknowledged create committed, and every committed row has exactly one create entry.
      for (const id of acknowledged) expect(rows.some((row) => row.id === id)).toBe(true);
      expect(creates.map((c) => c.entity_id).sort()).toEqual(rows.map((row) => row.id).sort());
      expect(creates.every((c) => c.n === 1)).toBe(true);
      // One update entry per committed update (its event commits with it), none for the lost ones.
      expect(Object.fromEntries(updates.map((u) => [u.entity_id, u.n]))).toEqual(Object.fromEntries(updatedEvents.map((e) => [e.stream_id, e.n])));
      expect(updates.map((u) => u.entity_id).sort()).toEqual(rows.filter((row) => row.updated).map((row) => row.id).sort());
      // And the restarted server reports the same through its route.
      const stats = (await (await fetch(`${base}/audit/statistics`, { headers: { authorization: `Bearer ${await login(base)}` } })).json()) as any;
      expect(stats.byAction['record.create']).toBe(rows.length);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited();
    }
  });
});
