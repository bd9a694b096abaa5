/**
 * The LISTEN connection of a real server: it comes back after the server
 * drops it, and close() leaves nothing connected, even when it runs while a
 * connection is being opened (a leaked listener kept a pooler or proxy, and
 * the test that used one, waiting forever).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgNotifier } from '../../runtime/db/notify.ts';
import { createTestDatabase, queryOnce, type TestDatabase } from '../helpers/db.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database?.drop();
});

const query = <T>(sql: string) => queryOnce<T>(database.url, sql);

const listenerBackends = () => query<{ pid: number }>(
  `select pid from pg_stat_activity where datname = current_database() and application_name = 'svc-gen-listener'`,
);

/** The server forgets a backend a moment after its client said goodbye. */
async function untilNoListener(): Promise<number> {
  const deadline = Date.now() + 5_000;
  let left = (await listenerBackends()).length;
  while (left > 0 && Date.now() < deadline) left = (await listenerBackends()).length;
  return left;
}

describe('pg notifier', () => {
  it('delivers, reconnects after its backend is terminated, and closes cleanly', async () => {
    const notifier = createPgNotifier(database.url, pg.Client);
    const received: string[] = [];
    let wake: () => void = () => undefined;
    await notifier.listen('svc_test_channel', (payload) => {
      received.push(payload);
      wake();
    });
    const next = () => new Promise<void>((done) => (wake = done));
    let arrived = next();
    await notifier.notify('svc_test_channel', 'one');
    await arrived;

    const [backend] = await listenerBackends();
    await query(`select pg_terminate_backend(${backend!.pid})`);
    // The reconnected listener is a new backend, listening again.
    const deadline = Date.now() + 10_000;
    let again: { pid: number }[] = [];
    while (Date.now() < deadline) {
      again = await listenerBackends();
      if (again.length === 1 && again[0]!.pid !== backend!.pid) break;
    }
    expect(again.map((b) => b.pid)).not.toContain(backend!.pid);
    arrived = next();
    await query(`select pg_notify('svc_test_channel', 'two')`);
    await arrived;
    expect(received).toEqual(['one', 'two']);

    await notifier.close();
    expect(await untilNoListener()).toBe(0);
    await expect(notifier.notify('svc_test_channel', 'late')).rejects.toThrow(/closed/);
  });

  it('leaves no connection behind when closed while connecting', async () => {
    for (let round = 0; round < 5; round++) {
      const notifier = createPgNotifier(database.url, pg.Client);
      const listening = notifier.listen('svc_test_channel', () => undefined).catch((error: Error) => error);
      await notifier.close();
      await listening;
      expect(await untilNoListener()).toBe(0);
    }
  });
});
