/** The operator's hooks (resolvers/<Model>.ts) run inside the mutation's transaction. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateBuild, type TestService } from '../helpers/service.ts';
import { clientFor, create, CREATE, RECORDS, RECORDS_FIXTURE, startRecordsService, UPDATE, type Gql } from './helpers.ts';

const HOOKS = `
export const hooks = {
  async beforeCreate(data, ctx) {
    return { ...data, value: data.value * 10 };
  },
  async afterCreate(record, ctx) {
    await ctx.tx.none('insert into "secret" ("id", "tenant_id", "label") values ($1, $2, $3)', ['H' + record.id, ctx.tenantKey, 'created ' + record.value + ' by ' + ctx.principal.userId]);
    if (record.value === 70) throw new Error('secret internal detail: select * from pg_shadow');
  },
  async beforeUpdate(id, patch, ctx) {
    return { ...patch, value: patch.value + 1 };
  },
  async afterDelete(id, ctx) {
    await ctx.tx.none('insert into "secret" ("id", "tenant_id", "label") values ($1, $2, $3)', ['D' + id, ctx.tenantKey, 'deleted']);
  },
};
`;

let service: TestService;
let gql: Gql;

beforeAll(async () => {
  const dir = await privateBuild(RECORDS_FIXTURE);
  writeFileSync(join(dir, 'resolvers', 'Counter.ts'), HOOKS);
  service = await startRecordsService({ dir });
  gql = await clientFor(service, { role: 'Manager', userId: 'hooker' });
});
afterAll(() => service?.close());

const secrets = async () => (await gql(RECORDS, { model: 'Secret', orderBy: { label: 'ASC' } })).data.records.map((s: any) => s.label);

describe('hooks', () => {
  it('beforeCreate may change the data; afterCreate writes in the same transaction', async () => {
    const counter = await create(gql, 'Counter', { value: 2 });
    expect(counter.value).toBe(20);
    expect(await secrets()).toContain('created 20 by hooker');
  });

  it('a failing hook rolls back row, event and hook writes, and is masked', async () => {
    const events = () => service.ctx.db.one<{ n: number }>(`select count(*)::int as n from svc_events where stream_type = 'Counter'`);
    const before = await events();
    const r = await gql(CREATE, { model: 'Counter', data: { value: 7 } });
    expect(r.code).toBe('INTERNAL_ERROR');
    expect(r.errors![0].message).toBe('internal error');
    expect(JSON.stringify(r.body)).not.toMatch(/pg_shadow|secret internal/);
    expect((await gql(RECORDS, { model: 'Counter', where: { value: 70 } })).data.records).toEqual([]);
    expect(await secrets()).not.toContain('created 70 by hooker');
    expect(await events()).toEqual(before);
  });

  it('beforeUpdate may change the patch; afterDelete runs on delete', async () => {
    const counter = await create(gql, 'Counter', { value: 1 });
    expect((await gql(UPDATE, { model: 'Counter', id: counter.id, data: { value: 5 } })).data.update.value).toBe(6);
    await gql('mutation($id: ID!) { delete(model: "Counter", id: $id) }', { id: counter.id });
    expect(await secrets()).toContain('deleted');
  });
});
