/**
 * The write-trigger seam (runtime/records/triggers.ts): a registered trigger
 * sees every watched write in the write's transaction, with old and new rows,
 * and a trigger that fails rolls the write back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import type { WrittenRecord } from '../../runtime/records/index.ts';
import { clientFor, create, CREATE, startRecordsService, UPDATE, type Gql } from './helpers.ts';

let service: TestService;
let gql: Gql;
const seen: Array<{ writes: WrittenRecord[]; depth: number | undefined; inTx: boolean }> = [];
let failOn: number | null = null;

beforeAll(async () => {
  service = await startRecordsService();
  service.ctx.services.records.triggers.add({
    watches: (model) => model === 'Counter',
    async written(t, caller, writes) {
      const { n } = await t.one<{ n: number }>('select count(*)::int as n from svc_events where id = any($1)', [writes.map((w) => w.eventId)]);
      seen.push({ writes: [...writes], depth: caller.depth, inTx: n === writes.length });
      if (writes.some((w) => (w.record?.value as number) === failOn)) throw new Error('trigger refused');
    },
  });
  gql = await clientFor(service, { role: 'Manager', userId: 'u1' });
});
afterAll(() => service?.close());

const last = () => seen[seen.length - 1];
const mutate = (query: string, variables: Record<string, unknown>) => gql(query, variables);

describe('write triggers', () => {
  it('see a create with its event, and no old row', async () => {
    const counter = await create(gql, 'Counter', { value: 3 });
    expect(last().inTx).toBe(true);
    expect(last().writes).toEqual([expect.objectContaining({
      model: 'Counter', kind: 'created', step: 'Created', id: counter.id, old: null, changed: ['value'],
      record: expect.objectContaining({ id: counter.id, value: 3 }),
    })]);
  });

  it('see an update with the whole old row, and every row of updateMany in one call', async () => {
    const a = await create(gql, 'Counter', { value: 100 });
    await create(gql, 'Counter', { value: 100 });
    await mutate(UPDATE, { model: 'Counter', id: a.id, data: { value: 101 } });
    expect(last().writes[0]).toMatchObject({ kind: 'updated', step: 'Updated', id: a.id, old: { value: 100 }, record: { value: 101 }, changed: ['value'] });
    const r = await mutate('mutation($where: JSON!, $data: JSON!) { updateMany(model: "Counter", where: $where, data: $data) }', { where: { value: 100 }, data: { value: 102 } });
    expect(r.errors).toBeUndefined();
    expect(last().writes).toHaveLength(1);
    expect(last().writes[0]).toMatchObject({ kind: 'updated', old: { value: 100 }, record: { value: 102 } });
    expect(last().inTx).toBe(true);
  });

  it('name restore as updated and hardDelete as deleted', async () => {
    const c = await create(gql, 'Counter', { value: 9 });
    await mutate('mutation($id: ID!) { delete(model: "Counter", id: $id) }', { id: c.id });
    expect(last().writes[0]).toMatchObject({ kind: 'deleted', step: 'Deleted', old: { value: 9 } });
    await mutate('mutation($id: ID!) { restore(model: "Counter", id: $id) }', { id: c.id });
    expect(last().writes[0]).toMatchObject({ kind: 'updated', step: 'Restored', record: { value: 9 } });
    await mutate('mutation($id: ID!) { hardDelete(model: "Counter", id: $id) }', { id: c.id });
    expect(last().writes[0]).toMatchObject({ kind: 'deleted', step: 'HardDeleted', record: null, old: { value: 9 } });
  });

  it('roll the write back when they fail', async () => {
    failOn = 77;
    const before = seen.length;
    const r = await mutate(CREATE, { model: 'Counter', data: { value: 77 } });
    expect(r.code).toBe('INTERNAL_ERROR');
    expect(seen.length).toBe(before + 1);
    const rows = await service.ctx.db.any(`select 1 from "counter" where "value" = 77`);
    expect(rows).toEqual([]);
    failOn = null;
  });
});
