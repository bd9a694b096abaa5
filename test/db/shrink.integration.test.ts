/**
 * A service database's pool after a burst, against the real Postgres: the
 * connections the burst opened are given back one at a time, spaced by the
 * shrinker's tick, never together (19 backends ending at once stalled a 2-core
 * machine for ~200 ms: docs/performance.md), and all of them in the end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../runtime/db/index.ts';
import { createTestDatabase, queryOnce, type TestDatabase } from '../helpers/db.ts';

const APP = 'svc-gen-shrink-test';
let database: TestDatabase;
let opened: Database | undefined;

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await opened?.close();
  await database?.drop();
});

const backends = async () => (await queryOnce<{ n: number }>(database.url,
  `select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = $1`, [APP]))[0].n;

describe('the pool after a burst', () => {
  it('closes the burst connections one per tick until none is left', async () => {
    opened = await openDatabase({ url: database.url, poolSize: 6, idleTimeoutMs: 300, applicationName: APP });
    const pool = opened.db.$pool;
    const removedAt: number[] = [];
    const allRemoved = new Promise<void>((done) => pool.on('remove', () => {
      removedAt.push(performance.now());
      if (removedAt.length === 6) done();
    }));

    // Six statements at once: six connections.
    await Promise.all(Array.from({ length: 6 }, () => opened!.db.any('select pg_sleep(0.05)')));
    expect(pool.totalCount).toBe(6);
    expect(await backends()).toBe(6);
    const idleSince = performance.now();

    await allRemoved;
    // None before the idle window passed; then spaced by the one-second tick, never two at once.
    expect(removedAt[0] - idleSince).toBeGreaterThanOrEqual(250);
    const gaps = removedAt.slice(1).map((at, i) => at - removedAt[i]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(800);
    expect(pool.totalCount).toBe(0);

    // The server forgets a backend a moment after its client said goodbye.
    const deadline = Date.now() + 5_000;
    let left = await backends();
    while (left > 0 && Date.now() < deadline) left = await backends();
    expect(left).toBe(0);

    // The pool still works: a new statement opens a connection again.
    expect(await opened.db.one('select 1 as one')).toEqual({ one: 1 });
  }, 20_000);
});
