/** Event sourcing and the soft-delete lifecycle, over real HTTP on a real database. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, RECORD, RECORDS, startRecordsService, UPDATE, type Gql } from './helpers.ts';

let service: TestService;
let gql: Gql;

const HISTORY = 'query($model: String!, $id: ID!) { recordHistory(model: $model, id: $id) { eventId eventType version data actorId occurredAt } }';
const op = (name: string, result = '') => `mutation($model: String!, $id: ID!) { ${name}(model: $model, id: $id)${result} }`;

async function history(model: string, id: string, client = gql) {
  const r = await client(HISTORY, { model, id });
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data.recordHistory as Array<{ eventType: string; version: number; data: any; actorId: string }>;
}

beforeAll(async () => {
  service = await startRecordsService();
  gql = await clientFor(service, { role: 'Manager', userId: 'manager-1' });
});
afterAll(() => service?.close());

describe('events', () => {
  it('records each step of the lifecycle as one event, in order', async () => {
    const c = await create(gql, 'Company', { name: 'Life' });
    await gql(UPDATE, { model: 'Company', id: c.id, data: { employees: 7 } });
    expect((await gql(op('delete'), { model: 'Company', id: c.id })).data.delete).toBe(true);

    const visible = async () => ({
      records: (await gql(RECORDS, { model: 'Company', where: { id: c.id } })).data.records.length,
      record: (await gql(RECORD, { model: 'Company', id: c.id })).data.record,
      page: (await gql('{ paginatedRecords(model: "Company") { totalCount items } }')).data.paginatedRecords,
      trash: (await gql('{ deletedRecords(model: "Company") }')).data.deletedRecords.map((r: any) => r.id),
    });
    const deleted = await visible();
    expect(deleted).toMatchObject({ records: 0, record: null, page: { totalCount: 0, items: [] }, trash: [c.id] });

    const restored = await gql(op('restore'), { model: 'Company', id: c.id });
    expect(restored.data.restore).toMatchObject({ id: c.id, deletedAt: null, employees: 7 });
    expect(await visible()).toMatchObject({ records: 1, record: { id: c.id }, page: { totalCount: 1 }, trash: [] });

    expect((await gql(op('hardDelete'), { model: 'Company', id: c.id })).data.hardDelete).toBe(true);
    expect(await visible()).toMatchObject({ records: 0, record: null, trash: [] });

    const events = await history('Company', c.id);
    expect(events.map((e) => [e.eventType, e.version])).toEqual([
      ['Created', 1], ['Updated', 2], ['Deleted', 3], ['Restored', 4], ['HardDeleted', 5],
    ]);
    expect(events[0].data).toMatchObject({ id: c.id, name: 'Life' });
    expect(events[1].data).toEqual({ employees: 7 });
    expect(events[2].data).toMatchObject({ id: c.id });
    expect(events.every((e) => e.actorId === 'manager-1')).toBe(true);
  });

  it('answers NOT_FOUND for steps that do not apply', async () => {
    const c = await create(gql, 'Company', { name: 'Steps' });
    expect((await gql(op('restore', ''), { model: 'Company', id: c.id })).code).toBe('NOT_FOUND');
    expect((await gql(op('delete'), { model: 'Company', id: 'missing' })).code).toBe('NOT_FOUND');
    await gql(op('delete'), { model: 'Company', id: c.id });
    expect((await gql(op('delete'), { model: 'Company', id: c.id })).code).toBe('NOT_FOUND');
    expect((await gql(UPDATE, { model: 'Company', id: c.id, data: { employees: 1 } })).code).toBe('NOT_FOUND');
    expect((await gql(HISTORY, { model: 'Company', id: 'missing' })).code).toBe('NOT_FOUND');
    expect((await history('Company', c.id)).map((e) => e.eventType)).toEqual(['Created', 'Deleted']);
  });

  it('keeps every event of 50 concurrent updates, with distinct versions', async () => {
    const counter = await create(gql, 'Counter', { value: 0 });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      gql(UPDATE, { model: 'Counter', id: counter.id, data: { value: i + 1 } })));
    expect(results.filter((r) => r.errors)).toEqual([]);
    const events = await history('Counter', counter.id);
    expect(events).toHaveLength(51);
    expect(events.map((e) => e.version)).toEqual(Array.from({ length: 51 }, (_, i) => i + 1));
    // The row holds the value of the update whose event came last.
    const row = (await gql(RECORD, { model: 'Counter', id: counter.id })).data.record;
    expect(row.value).toBe(events[50].data.value);
  });

  it('updateMany updates live matching rows and appends one event each', async () => {
    const bulk = await clientFor(service, { role: 'Manager', tenantId: 'bulk', userId: 'manager-bulk' });
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await create(bulk, 'Company', { name: `Many ${i}`, employees: i })).id);
    await bulk(op('delete'), { model: 'Company', id: ids[4] });
    const r = await bulk('mutation($w: JSON!, $d: JSON!) { updateMany(model: "Company", where: $w, data: $d) }',
      { w: { employees: { gte: 1 } }, d: { active: true } });
    expect(r.data.updateMany).toBe(3);
    const rows = (await bulk(RECORDS, { model: 'Company', orderBy: { employees: 'ASC' } })).data.records;
    expect(rows.map((c: any) => c.active)).toEqual([null, true, true, true]);
    for (const id of ids.slice(1, 4)) {
      expect((await history('Company', id, bulk)).map((e) => e.eventType)).toEqual(['Created', 'Updated']);
    }
    const invalid = await bulk('mutation { updateMany(model: "Company", where: {}, data: {employees: -5}) }');
    expect(invalid.code).toBe('VALIDATION_ERROR');
  });

  it('writes row and event in one transaction: a failed write leaves neither', async () => {
    const before = await service.ctx.db.one<{ n: number }>('select count(*)::int as n from svc_events');
    const r = await gql(UPDATE, { model: 'Company', id: 'missing', data: { name: 'Nope' } });
    expect(r.code).toBe('NOT_FOUND');
    const after = await service.ctx.db.one<{ n: number }>('select count(*)::int as n from svc_events');
    expect(after.n).toBe(before.n);
  });
});
