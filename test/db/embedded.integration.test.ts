/**
 * The embedded database (PGlite, one backend) reached by two clients at
 * once: the pool's one node-postgres connection and the notifier. Each
 * statement must get its own answer and none may hang, whatever runs
 * concurrently; a notification is delivered once, after its commit.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../runtime/db/index.ts';

let database: Database;
beforeAll(async () => {
  database = await openDatabase({ url: null, embeddedDir: join(mkdtempSync(join(tmpdir(), 'svc-db-embedded-')), 'pgdata') });
  expect(database.kind).toBe('embedded');
}, 60_000);
afterAll(async () => {
  await database?.close();
});

/** Rejects when `work` has not settled within `ms` (a hang, not a slow machine: the work takes a few ms). */
function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

it('pool statements with LISTEN and NOTIFY started beside them: every one answered, with its own rows', { timeout: 120_000 }, async () => {
  const { db, notifier } = database;
  await db.none('create table if not exists race (id int primary key, n int not null)');
  await db.none('insert into race values (1, 0) on conflict do nothing');
  const received: string[] = [];
  const stops: Array<() => Promise<void>> = [await notifier.listen('svc_race', (payload) => received.push(payload))];
  // The dev server's start, reduced: a write of the pool (its answer waits for PGlite's file sync)
  // while another capability starts listening. Before the fix, one of these rounds never ended.
  for (let i = 0; i < 60; i++) {
    const [, stop, row] = await within(10_000, `round ${i}`, Promise.all([
      db.tx(async (t) => t.none('update race set n = n + 1 where id = 1')),
      notifier.listen(`svc_race_${i}`, () => undefined),
      db.one<{ n: number }>('select $1::int as n', [i]),
      notifier.notify('svc_race', `n${i}`),
    ]));
    stops.push(stop);
    expect(row.n).toBe(i);
  }
  expect((await db.one<{ n: number }>('select n from race where id = 1')).n).toBe(60);
  expect(received.sort()).toEqual(Array.from({ length: 60 }, (_, i) => `n${i}`).sort());
  for (const stop of stops) await stop();
});

it('a notifier call made while a pool statement is being answered (a handler of the notification that statement carried) leaves that answer alone', { timeout: 120_000 }, async () => {
  const { db, notifier } = database;
  const echoed: string[] = [];
  const stops = [
    // Called while PGlite parses the answer of the statement that carried the notification, before the
    // pool has taken that answer: the handler's own statement ran in between and took it.
    await notifier.listen('svc_ping', (payload) => void notifier.notify('svc_pong', payload)),
    await notifier.listen('svc_pong', (payload) => echoed.push(payload)),
  ];
  for (let i = 0; i < 20; i++) {
    const row = await within(10_000, `ping ${i}`, db.one<{ n: number }>("select $1::int as n, pg_notify('svc_ping', $1::text)", [i]));
    expect(row.n).toBe(i);
  }
  await within(10_000, 'every pong', (async () => {
    while (echoed.length < 20) await db.one('select 1');
  })());
  expect(echoed.map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  for (const stop of stops) await stop();
});

it('a notification sent in a pooled transaction arrives after its commit, none after a rollback', { timeout: 60_000 }, async () => {
  const { db, notifier } = database;
  const received: string[] = [];
  const unlisten = await notifier.listen('svc_embedded_tx', (payload) => received.push(payload));
  await db.tx(async (t) => {
    await t.one("select pg_notify('svc_embedded_tx', 'committed')");
    expect(received).toEqual([]);
  });
  await db.tx(async (t) => {
    await t.one("select pg_notify('svc_embedded_tx', 'rolled back')");
    throw new Error('roll back');
  }).catch(() => undefined);
  await notifier.notify('svc_embedded_tx', 'last');
  await within(20_000, 'the notifications', (async () => {
    while (!received.includes('last')) await db.one('select 1');
  })());
  expect(received).toEqual(['committed', 'last']);
  await unlisten();
});
