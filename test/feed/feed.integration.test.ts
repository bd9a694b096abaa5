/**
 * The change feed against the real Postgres: two instances on one database,
 * commit order, a reader whose connections are killed, transactions that
 * commit out of id order, and a subscriber that overflows.
 */
import pg from 'pg';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { comparePositions, FeedOverflowError, type FeedChange, type FeedPosition } from '../../runtime/feed/index.ts';
import { ADMIN_URL } from '../helpers/db.ts';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, startRecordsService } from '../records/helpers.ts';
import { collect, connect, insertEvent, until } from './helpers.ts';

let first: TestService;
let second: TestService;
const clients: pg.Client[] = [];

beforeAll(async () => {
  first = await startRecordsService();
  second = await startRecordsService({ database: first.database });
});
afterAll(async () => {
  for (const c of clients) await c.end().catch(() => undefined);
  await second?.close();
  await first?.close();
});

async function client(): Promise<pg.Client> {
  const c = await connect(first.database.url);
  clients.push(c);
  return c;
}

const ids = (changes: readonly FeedChange[]) => changes.map((c) => c.eventId);

describe('change feed', () => {
  it('no write statement or write transaction calls pg_notify (records and jobs)', async () => {
    const Client = (first.ctx.pgp.pg as any).Client.prototype;
    const original = Client.query;
    const inTx = new WeakSet<object>();
    const offending: string[] = [];
    Client.query = function (this: object, ...args: unknown[]) {
      const text = (typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string })?.text ?? '').trim().toLowerCase();
      if (text === 'begin') inTx.add(this);
      if (text === 'commit' || text === 'rollback') inTx.delete(this);
      if (text.includes('pg_notify') && (inTx.has(this) || /insert|update|delete/.test(text))) offending.push(text);
      return original.apply(this, args);
    };
    try {
      const gql = await clientFor(first, { role: 'Admin' });
      const company = await create(gql, 'Company', { name: 'Quiet' });
      await gql('mutation($id: ID!) { update(model: "Company", id: $id, data: { employees: 3 }) }', { id: company.id });
      await gql('mutation { updateMany(model: "Company", where: { name: "Quiet" }, data: { employees: 4 }) }');
      await gql('mutation($id: ID!) { delete(model: "Company", id: $id) }', { id: company.id });
      await gql('mutation($id: ID!) { restore(model: "Company", id: $id) { id } }'.replace(' { id }', ''), { id: company.id });
      await gql('mutation($id: ID!) { hardDelete(model: "Company", id: $id) }', { id: company.id });
      const job = await gql('mutation { enqueueJob(queue: "q", kind: "k") { id } }');
      expect(job.errors).toBeUndefined();
      const jobs = await gql('mutation { a: enqueueJob(queue: "q", kind: "k", idempotencyKey: "x") { id } b: enqueueJob(queue: "q", kind: "k") { id } }');
      expect(jobs.errors).toBeUndefined();
    } finally {
      Client.query = original;
    }
    expect(offending).toEqual([]);
  });

  it('delivers every committed change to every instance, once, in (tx, seq) order', async () => {
    const onFirst = collect(first.ctx.services.feed, { accepts: (c) => c.modelName === 'Company' });
    const onSecond = collect(second.ctx.services.feed, { accepts: (c) => c.modelName === 'Company' });
    const a = await clientFor(first, { role: 'Manager' });
    const b = await clientFor(second, { role: 'Manager' });
    const written = await Promise.all(Array.from({ length: 40 }, (_, i) =>
      create(i % 2 === 0 ? a : b, 'Company', { name: `Feed ${i}` })));
    // Updates of one record from both instances: their order must survive.
    const target = written[0].id as string;
    for (let i = 0; i < 6; i++) {
      const writer = i % 2 === 0 ? a : b;
      await writer('mutation($id: ID!, $d: JSON!) { update(model: "Company", id: $id, data: $d) }', { id: target, d: { employees: i } });
    }
    const expected = await first.ctx.db.map(
      `select id from svc_events where stream_type = 'Company' and stream_id = any($1) order by tx, seq`,
      [written.map((row) => row.id)], (r) => r.id as string);
    expect(expected).toHaveLength(46);
    // Earlier tests' changes may still be on their way: compare the changes of this test's records.
    const mine = new Set(written.map((row) => row.id as string));
    const ofMine = (changes: readonly FeedChange[]) => changes.filter((c) => mine.has(c.recordId));
    await until(() => ofMine(onFirst.changes).length >= 46 && ofMine(onSecond.changes).length >= 46, 'both instances to receive 46 changes');
    expect(ids(ofMine(onFirst.changes))).toEqual(expected);
    expect(ids(ofMine(onSecond.changes))).toEqual(expected);
    for (let i = 1; i < onFirst.changes.length; i++) {
      expect(comparePositions(onFirst.changes[i - 1].position, onFirst.changes[i].position)).toBeLessThan(0);
    }
    const versions = onSecond.changes.filter((c) => c.recordId === target).map((c) => c.version);
    expect(versions).toEqual([1, 2, 3, 4, 5, 6, 7]);
    onFirst.subscription.close();
    onSecond.subscription.close();
  });

  it('delivers a change committed while the reader\'s connections are down, after they come back', async () => {
    const onSecond = collect(second.ctx.services.feed);
    const writer = await client(); // connected before the outage: it stays
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    const feed = second.ctx.services.feed;
    const name = first.database.name;
    const written: string[] = [];
    const failuresBefore = feed.stats().failures;
    // The database refuses new connections and every backend of both instances (pools, listeners) dies.
    await admin.query(`alter database "${name}" allow_connections false`);
    try {
      await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity
                          where datname = $1 and pid <> $2`, [name, (writer as any).processID]);
      for (let i = 0; i < 3; i++) written.push(await insertEvent(writer, 'Company'));
      // The reader tried and failed: its connection is really down while these changes commit.
      await until(() => feed.stats().failures > failuresBefore, 'the reader to fail a read');
      written.push(await insertEvent(writer, 'Company'));
    } finally {
      await admin.query(`alter database "${name}" allow_connections true`);
      await admin.end();
    }
    await until(() => onSecond.changes.length >= 4, 'the changes written while the reader was down');
    expect(ids(onSecond.changes)).toEqual(written);
    // The instances recovered: a write through the API arrives on the other instance.
    const api = await clientFor(first, { role: 'Manager' });
    const company = await create(api, 'Company', { name: 'After the outage' });
    await until(() => onSecond.changes.some((c) => c.recordId === company.id), 'a write after the outage');
    onSecond.subscription.close();
  });

  it('reports the lag of a late change, and no lag once it has caught up', async () => {
    const feed = second.ctx.services.feed;
    const writer = await client();
    // A change that took 30 s from its commit to the reader (as if the reader had been stuck).
    await writer.query(`insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id, occurred_at)
                        values ($1, 'Company', $2, 1, 'Created', '{}'::jsonb, 'test', '', now() - interval '30 seconds')`, [ulid(), ulid()]);
    feed.poke();
    await until(() => feed.stats().lastLagMs >= 29_000, 'the late change to be read');
    const reads = feed.stats().reads;
    feed.poke();
    await until(() => feed.stats().reads > reads, 'a read that finds nothing new');
    expect(feed.stats().lastLagMs).toBe(0);
    expect(feed.stats().maxLagMs).toBeGreaterThanOrEqual(29_000);
  });

  // Four interleavings of two transactions: which one inserts its event first, and which commits first.
  // The one with the lower transaction id (`low`) is the one that took an id first.
  for (const insertFirst of ['low', 'high'] as const) {
    for (const commitFirst of ['low', 'high'] as const) {
      it(`delivers both of two overlapping transactions (${insertFirst} inserts first, ${commitFirst} commits first)`, async () => {
        const stream = `Overlap-${insertFirst}-${commitFirst}`;
        const accepts = (c: FeedChange) => c.modelName === stream;
        const onFirst = collect(first.ctx.services.feed, { accepts });
        const onSecond = collect(second.ctx.services.feed, { accepts });
        const consumed: string[] = [];
        const consumer = await first.ctx.services.feed.consume({
          name: `test-${stream}`,
          streams: [stream],
          handle: async (changes) => void consumed.push(...ids(changes)),
        });
        const low = await client();
        const high = await client();
        await low.query('begin');
        await low.query('select pg_current_xact_id()');
        await high.query('begin');
        await high.query('select pg_current_xact_id()');
        const order = insertFirst === 'low' ? [low, high] : [high, low];
        const eventOf = new Map<pg.Client, string>();
        for (const c of order) eventOf.set(c, await insertEvent(c, stream));
        const [early, late] = commitFirst === 'low' ? [low, high] : [high, low];
        await early.query('commit');
        // Let both readers pass the early commit at least twice before the late one commits.
        const reads = first.ctx.services.feed.stats().reads;
        first.ctx.services.feed.poke();
        await until(() => first.ctx.services.feed.stats().reads >= reads + 2, 'two reads');
        await late.query('commit');
        first.ctx.services.feed.poke();
        const both = [eventOf.get(low)!, eventOf.get(high)!]; // (tx, seq) order: the lower id first
        await until(() => onFirst.changes.length >= 2 && onSecond.changes.length >= 2, 'both changes on both instances');
        await consumer.drain();
        expect(ids(onFirst.changes)).toEqual(both);
        expect(ids(onSecond.changes)).toEqual(both);
        expect(consumed).toEqual(both);
        await consumer.stop();
        onFirst.subscription.close();
        onSecond.subscription.close();
      });
    }
  }

  it('a transaction left open in another database of the cluster does not hold the feed back', async () => {
    const elsewhere = new pg.Client({ connectionString: ADMIN_URL });
    await elsewhere.connect();
    try {
      await elsewhere.query('begin');
      await elsewhere.query('select pg_current_xact_id()'); // an xid, older than every change below
      const onSecond = collect(second.ctx.services.feed, { accepts: (c) => c.modelName === 'Elsewhere' });
      const admin = await client();
      const written = [await insertEvent(admin, 'Elsewhere'), await insertEvent(admin, 'Elsewhere')];
      second.ctx.services.feed.poke();
      await until(() => onSecond.changes.length >= 2, 'changes while another database holds an old transaction');
      expect(ids(onSecond.changes)).toEqual(written);
      onSecond.subscription.close();
    } finally {
      await elsewhere.query('rollback').catch(() => undefined);
      await elsewhere.end();
    }
  });

  it('a subscriber whose queue overflows gets what it queued, then an error, and is closed', async () => {
    const feed = first.ctx.services.feed;
    const slow = feed.subscribe({ maxQueued: 5, accepts: (c) => c.modelName === 'Counter' });
    const admin = await client();
    let last = '';
    for (let i = 0; i < 8; i++) last = await insertEvent(admin, 'Counter');
    feed.poke();
    const position = (await feed.positionOf(last))!.position as FeedPosition; // global mode
    await until(() => comparePositions(feed.head, position) >= 0, 'the reader to pass the last change');
    const got: FeedChange[] = [];
    let failure: unknown = null;
    try {
      for await (const change of slow) got.push(change);
    } catch (error) {
      failure = error;
    }
    expect(got).toHaveLength(5);
    expect(failure).toBeInstanceOf(FeedOverflowError);
    expect((failure as FeedOverflowError).resumeAfter?.eventId).toBe(got[4].eventId);
    // Resuming after the last change received delivers the rest: nothing was skipped.
    const resumed = collect(feed, { from: got[4].position, accepts: (c) => c.modelName === 'Counter' });
    await until(() => resumed.changes.length >= 3, 'the rest after resuming');
    expect(resumed.changes).toHaveLength(3);
    resumed.subscription.close();
  });

  it('hints the other instance after local commits, once it has said hello', async () => {
    // Both said hello at start (and every second since): each knows the other listens.
    const before = first.ctx.services.feed.stats().hints;
    const onSecond = collect(second.ctx.services.feed, { streams: ['Company'], accepts: (c) => c.modelName === 'Company' });
    const a = await clientFor(first, { role: 'Manager' });
    const made = await create(a, 'Company', { name: 'Hinted' });
    await until(() => onSecond.changes.some((c) => c.recordId === made.id), 'the change on the second instance');
    expect(first.ctx.services.feed.stats().hints).toBeGreaterThan(before);
    onSecond.subscription.close();
  });
});
