/**
 * The feed's page is in (tx, seq) order as numbers: `tx` travels as text, and
 * a page that holds transactions on both sides of a power of ten (999 and
 * 1000) must not sort them as text ("1000" < "999"), or a subscriber whose
 * cursor passes the later one drops the earlier (seen on the embedded
 * database once the runtime's migrations had used ~970 transaction ids).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readPage } from '../../runtime/feed/read.ts';
import type { Db } from '../../runtime/db/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { openDb } from '../migrate/helpers.ts';

let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase('svc_t_feedorder', { fixture: 'small' });
  db = openDb(database.url, 2);
});
afterAll(async () => {
  await db?.$pool.end();
  await database?.drop();
});

it('reads transactions 999, 1000 and 10000 in that order, from the event log and the change log', async () => {
  // Transaction ids far below the horizon: every one of them has ended.
  await db.none(`insert into svc_events (id, stream_type, stream_id, version, event_type, tenant_id, tx)
    values ('e-1000', 'Company', 'c1', 1, 'Created', '', '1000'), ('e-999', 'Company', 'c2', 1, 'Created', '', '999')`);
  await db.none(`insert into svc_changes (id, stream_type, stream_id, event_type, tenant_id, tx) values ('c-10000', 'Company', 'c3', 'Updated', '', '10000')`);
  const page = await readPage(db, { tx: '998', seq: 0 }, 10);
  expect(page.changes.map((c) => [c.position.tx, c.eventId])).toEqual([['999', 'e-999'], ['1000', 'e-1000'], ['10000', 'c-10000']]);
  expect(page.changes.every((c) => c.tenantId === null)).toBe(true);
  // A page of one ends at the first of them, not past the others.
  const first = await readPage(db, { tx: '998', seq: 0 }, 1);
  expect(first.changes.map((c) => c.eventId)).toEqual(['e-999']);
  expect(first.end).toEqual(first.changes[0].position);
});
