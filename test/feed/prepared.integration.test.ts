/**
 * The feed's background statements run many times a second under a write
 * load; on a server (no transaction pooler) they are prepared once per
 * connection instead of being planned on every run, and read the same rows
 * as the formatted text a pooler or the embedded database gets.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixed } from '../../runtime/db/index.ts';
import { filterOf, ORIGIN, readPage } from '../../runtime/feed/read.ts';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, startRecordsService } from '../records/helpers.ts';
import { insertEvent, until } from './helpers.ts';

let service: TestService;
let pool: pg.Pool;

beforeAll(async () => {
  service = await startRecordsService();
  pool = new pg.Pool({ connectionString: service.database.url, max: 2 });
});
afterAll(async () => {
  await pool?.end();
  await service?.close();
});

describe('prepared feed statements', () => {
  it('names the statement when prepared, and formats the values in otherwise', () => {
    expect(fixed(true, 'svc_x', 'select $1::int', [7])).toEqual({ name: 'svc_x', text: 'select $1::int', values: [7] });
    expect(fixed(false, 'svc_x', 'select $1::int, $2', [7, ['a', "b'c"]])).toBe("select 7::int, array['a','b''c']");
  });

  it('reads the same page either way, and a prepared read is planned once per connection', async () => {
    const ids = [await insertEvent(pool, 'Alpha'), await insertEvent(pool, 'Beta'), await insertEvent(pool, 'Alpha')];
    const filter = filterOf([{ streams: ['Alpha'] }]);
    const { db } = service.ctx;
    // One snapshot for the three reads: a page's end is the horizon, which any
    // transaction that starts meanwhile (in any database of the cluster) moves on.
    const result = await db.tx(async (t) => {
      await t.none('set transaction isolation level repeatable read, read only');
      const formatted = await readPage(t, ORIGIN, 100, true, filter, false);
      const prepared = await readPage(t, ORIGIN, 100, true, filter, true);
      const again = await readPage(t, ORIGIN, 100, true, filter, true);
      const statements = await t.map<string>('select name from pg_prepared_statements order by name', [], (row) => row.name);
      return { formatted, prepared, again, statements };
    });
    const alphas = (page: typeof result.formatted) => page.changes.map((c) => c.eventId).filter((id) => ids.includes(id));
    expect(alphas(result.formatted)).toEqual([ids[0], ids[2]]);
    expect(alphas(result.prepared)).toEqual(alphas(result.formatted));
    expect(result.prepared.end).toEqual(result.formatted.end);
    expect(result.again.changes).toEqual(result.prepared.changes);
    expect(result.statements).toContain('svc_feed_page_data_filtered');
  });

  it('prepares the statements of the projection refresh on the connection that ran them', async () => {
    // A create refreshes the built-in projection through a durable consumer: its cursor, its page, its upsert.
    const gql = await clientFor(service, { role: 'Manager', userId: 'prepared-test' });
    const created = await Promise.all([1, 2, 3].map((i) => create(gql, 'Company', { name: `Prepared ${i}` })));
    const ids = created.map((company) => company.id as string);
    await until(async () => (await pool.query('select count(*)::int as n from company_projection where id = any($1)', [ids])).rows[0].n === 3,
      'the projection rows');
    await until(() => service.ctx.services.projections.stats().pending === 0, 'the refresh to end and give its connection back');
    // Every pooled connection at once (a barrier holds each until all are taken): the refresh ran on one of them.
    const { db } = service.ctx;
    const size = (db.$pool as unknown as { totalCount: number }).totalCount;
    let arrived = 0;
    let release!: () => void;
    const barrier = new Promise<void>((resolve) => (release = resolve));
    const names = new Set<string>();
    await Promise.all(Array.from({ length: size }, () => db.task(async (t) => {
      for (const row of await t.any<{ name: string }>('select name from pg_prepared_statements')) names.add(row.name);
      if (++arrived === size) release();
      await barrier;
    })));
    expect([...names]).toEqual(expect.arrayContaining(['svc_feed_cursor_lock', 'svc_feed_cursor_advance', 'svc_projections_hold']));
    expect([...names].some((name) => name.startsWith('svc_refresh_'))).toBe(true);
  });
});
