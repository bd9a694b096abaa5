/**
 * The reader reads only what its subscribers and consumers declared, and a
 * subscriber whose streams were not being read when it joined misses nothing
 * (the reader reads the page again, wider, before delivering it).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { comparePositions, type FeedPosition } from '../../runtime/feed/index.ts';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, startRecordsService } from '../records/helpers.ts';
import { collect, insertEvent, until } from './helpers.ts';

let service: TestService;
let pool: pg.Pool;

beforeAll(async () => {
  service = await startRecordsService();
  pool = new pg.Pool({ connectionString: service.database.url, max: 4 });
});
afterAll(async () => {
  await pool?.end();
  await service?.close();
});

async function positions(stream: string): Promise<Array<{ id: string; position: FeedPosition }>> {
  const { rows } = await pool.query<{ id: string; tx: string; seq: string }>(
    'select id, tx::text as tx, seq from svc_events where stream_type = $1 order by tx, seq', [stream]);
  return rows.map((row) => ({ id: row.id, position: { tx: row.tx, seq: Number(row.seq) } }));
}

describe('feed interest', () => {
  it('does not read changes of streams nobody declared', async () => {
    const feed = service.ctx.services.feed;
    const alpha = collect(feed, { streams: ['Alpha'] });
    const before = feed.stats().delivered;
    for (let i = 0; i < 40; i++) await insertEvent(pool, 'Unwatched');
    for (let i = 0; i < 10; i++) await insertEvent(pool, 'Alpha');
    await until(() => alpha.changes.length === 10, 'the Alpha changes');
    // Everything up to the last Alpha was read: only the Alpha changes crossed into the process.
    expect(feed.stats().delivered - before).toBe(10);
    expect(alpha.changes.every((c) => c.modelName === 'Alpha')).toBe(true);
    alpha.subscription.close();
  });

  it('gives a subscriber that joins while a narrower read is in flight every change after its start', async () => {
    const feed = service.ctx.services.feed;
    const writer = await pool.connect();
    const locker = await pool.connect();
    try {
      // Beta changes nobody reads yet, committed only once the reader's next read is held up.
      await writer.query('begin');
      const written = [];
      for (let i = 0; i < 3; i++) written.push(await insertEvent(writer, 'Beta'));
      await locker.query('begin');
      await locker.query('lock table svc_changes in access exclusive mode');
      await writer.query('commit');
      // The reader's next read (narrow: nobody wants Beta) now waits on the lock.
      feed.poke();
      await until(async () => (await pool.query(
        `select 1 from pg_stat_activity where application_name = 'svc-gen-feed' and wait_event_type = 'Lock'`)).rowCount === 1,
      'the reader to wait on the lock');
      const start = feed.head;
      const beta = collect(feed, { streams: ['Beta'] });
      await locker.query('commit');
      await until(() => beta.changes.length === 3, 'the three Beta changes');
      expect(beta.changes.map((c) => c.eventId)).toEqual(written);
      const all = await positions('Beta');
      expect(all.filter((e) => comparePositions(e.position, start) > 0).map((e) => e.id)).toEqual(written);
      beta.subscription.close();
    } finally {
      await writer.query('rollback').catch(() => undefined);
      await locker.query('rollback').catch(() => undefined);
      writer.release();
      locker.release();
    }
  });

  it('sends no wake-up hints while no other instance listens', async () => {
    const feed = service.ctx.services.feed;
    const alpha = collect(feed, { streams: ['Company'] });
    const gql = await clientFor(service, { role: 'Manager' });
    for (let i = 0; i < 5; i++) await create(gql, 'Company', { name: `Alone ${i}` });
    await until(() => alpha.changes.length === 5, 'the five changes');
    expect(feed.stats().hints).toBe(0);
    alpha.subscription.close();
  });
});
