/**
 * Durable consumers: a named cursor advanced in the transaction of the
 * effect. Two instances run the same consumer: each change's effect is
 * written exactly once; a handler that fails mid-batch rolls back and the
 * batch is replayed, not lost.
 */
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DurableConsumer, FeedChange } from '../../runtime/feed/index.ts';
import type { TestService } from '../helpers/service.ts';
import { startRecordsService } from '../records/helpers.ts';
import { insertEvent, until } from './helpers.ts';

let first: TestService;
let second: TestService;

beforeAll(async () => {
  first = await startRecordsService();
  second = await startRecordsService({ database: first.database });
  await first.ctx.db.none('create table effects (event_id text primary key, consumer text not null)');
});
afterAll(async () => {
  await second?.close();
  await first?.close();
});

/** Writes one effect row per change in the consumer's transaction; a duplicate would violate the key. */
function recorder(name: string, stream: string, failOnce?: { after: number }): DurableConsumer {
  let failures = failOnce ? 1 : 0;
  return {
    name,
    streams: [stream],
    batchSize: 7,
    async handle(changes: readonly FeedChange[], t) {
      for (const [i, change] of changes.entries()) {
        await t.none('insert into effects (event_id, consumer) values ($1, $2)', [change.eventId, name]);
        if (failures > 0 && i === failOnce!.after) {
          failures -= 1;
          throw new Error('crash in the middle of a batch');
        }
      }
    },
  };
}

async function writeEvents(url: string, stream: string, count: number): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  try {
    return await Promise.all(Array.from({ length: count }, () => insertEvent(pool, stream)));
  } finally {
    await pool.end();
  }
}

const effects = (name: string) =>
  first.ctx.db.map('select event_id from effects where consumer = $1 order by event_id', [name], (r) => r.event_id as string);

it('two instances running one consumer apply each change exactly once', async () => {
  const name = 'test-shared';
  const a = await first.ctx.services.feed.consume(recorder(name, 'Shared'));
  const b = await second.ctx.services.feed.consume(recorder(name, 'Shared'));
  const written = await writeEvents(first.database.url, 'Shared', 60);
  first.ctx.services.feed.poke();
  await until(async () => (await effects(name)).length >= 60, 'every effect');
  await a.drain();
  await b.drain();
  expect(await effects(name)).toEqual([...written].sort());
  expect(a.stats().handled + b.stats().handled).toBe(60);
  await a.stop();
  await b.stop();
});

it('a batch that fails is rolled back and replayed: no change lost, no effect twice', async () => {
  const name = 'test-crash';
  const consumer = await first.ctx.services.feed.consume(recorder(name, 'Crash', { after: 3 }));
  const written = await writeEvents(first.database.url, 'Crash', 20);
  first.ctx.services.feed.poke();
  await until(async () => (await effects(name)).length >= 20, 'every effect after the retry');
  expect(await effects(name)).toEqual([...written].sort());
  expect(consumer.stats().failures).toBe(1);
  await consumer.stop();
});

it('a consumer stopped while changes commit resumes from its cursor when it starts again', async () => {
  const name = 'test-resume';
  let consumer = await first.ctx.services.feed.consume(recorder(name, 'Resume'));
  const before = await writeEvents(first.database.url, 'Resume', 5);
  first.ctx.services.feed.poke();
  await until(async () => (await effects(name)).length >= 5, 'the first effects');
  await consumer.stop();
  const during = await writeEvents(first.database.url, 'Resume', 5); // nobody consumes these now
  consumer = await second.ctx.services.feed.consume(recorder(name, 'Resume'));
  await until(async () => (await effects(name)).length >= 10, 'the effects missed while stopped');
  expect(await effects(name)).toEqual([...before, ...during].sort());
  await consumer.stop();
});
