/**
 * hardDelete of a row that optional relations point at (ADR 025, "Relation
 * keys on Citus"), over real HTTP on a real database: the keys are `on delete
 * no action`, so the service clears the references itself, in the delete's
 * transaction and in the caller's tenant only, as silently as Postgres' `set
 * null` did. Runs with SVC_DISTRIBUTED_CHECK=1: every statement is pinned to
 * one tenant.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installedCheck } from '../../runtime/db/distributed/index.ts';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, RECORD, startRecordsService, UPDATE, type Gql } from './helpers.ts';

let service: TestService;
let a: Gql;
let b: Gql;
const before = process.env.SVC_DISTRIBUTED_CHECK;

beforeAll(async () => {
  process.env.SVC_DISTRIBUTED_CHECK = '1';
  service = await startRecordsService();
  a = await clientFor(service, { role: 'Manager', tenantId: 'tenant-a', userId: 'manager-a' });
  b = await clientFor(service, { role: 'Manager', tenantId: 'tenant-b', userId: 'manager-b' });
});
afterAll(async () => {
  await service?.close();
  if (before === undefined) delete process.env.SVC_DISTRIBUTED_CHECK;
  else process.env.SVC_DISTRIBUTED_CHECK = before;
});

const HARD_DELETE = 'mutation($model: String!, $id: ID!) { hardDelete(model: $model, id: $id) }';
const DELETE = 'mutation($model: String!, $id: ID!) { delete(model: $model, id: $id) }';
const HISTORY = 'query($model: String!, $id: ID!) { recordHistory(model: $model, id: $id) { eventType } }';

async function record(gql: Gql, model: string, id: string): Promise<any> {
  const r = await gql(RECORD, { model, id });
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data.record;
}

async function trash(gql: Gql, model: string): Promise<any[]> {
  const r = await gql(`{ deletedRecords(model: "${model}") }`);
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data.deletedRecords;
}

/** Until another session of this database waits on a lock (the service's delete waiting for `client`'s transaction). */
async function waitForLockWait(client: pg.Client): Promise<void> {
  for (;;) {
    const { rows } = await client.query(`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`);
    if (rows[0].n > 0) return;
  }
}

describe('hardDelete of a referenced row', () => {
  it('clears every reference to it in its tenant (live, trashed, and one added while it is deleted), touches no other row and no other tenant, and appends no event for them', async () => {
    const acme = await create(a, 'Company', { name: 'Acme' });
    const kept = await create(a, 'Company', { name: 'Kept' });
    const ann = await create(a, 'Contact', { name: 'Ann', stage: 'lead', companyId: acme.id });
    const bob = await create(a, 'Contact', { name: 'Bob', stage: 'won', companyId: acme.id });
    const cid = await create(a, 'Contact', { name: 'Cid', stage: 'lead', companyId: kept.id });
    const dot = await create(a, 'Contact', { name: 'Dot', stage: 'lost' });
    expect((await a(DELETE, { model: 'Contact', id: bob.id })).data.delete).toBe(true);
    const globex = await create(b, 'Company', { name: 'Globex' });
    const eve = await create(b, 'Contact', { name: 'Eve', stage: 'lead', companyId: globex.id });

    // Another tenant's hardDelete of Acme finds nothing and clears nothing.
    expect((await b(HARD_DELETE, { model: 'Company', id: acme.id })).code).toBe('NOT_FOUND');
    expect((await record(a, 'Contact', ann.id)).companyId).toBe(acme.id);

    expect((await a(HARD_DELETE, { model: 'Company', id: acme.id })).data.hardDelete).toBe(true);
    expect(await record(a, 'Company', acme.id)).toBeNull();
    const annAfter = await record(a, 'Contact', ann.id);
    expect(annAfter).toMatchObject({ id: ann.id, name: 'Ann', companyId: null });
    // As silent as Postgres' set null was: updated_at unchanged, no event for the cleared row.
    expect(annAfter.updatedAt).toBe(ann.updatedAt);
    expect((await a(HISTORY, { model: 'Contact', id: ann.id })).data.recordHistory.map((e: any) => e.eventType)).toEqual(['Created']);
    expect((await trash(a, 'Contact')).find((r) => r.id === bob.id)).toMatchObject({ companyId: null });
    expect(await record(a, 'Contact', cid.id)).toMatchObject({ companyId: kept.id });
    expect(await record(a, 'Contact', dot.id)).toMatchObject({ companyId: null });
    expect((await a(HISTORY, { model: 'Company', id: acme.id })).data.recordHistory.map((e: any) => e.eventType)).toEqual(['Created', 'HardDeleted']);

    // Tenant B's rows are untouched.
    expect(await record(b, 'Contact', eve.id)).toMatchObject({ companyId: globex.id, updatedAt: eve.updatedAt });
    expect(await record(b, 'Company', globex.id)).toMatchObject({ id: globex.id });

    // In tenant B, the same works, and leaves tenant A alone.
    expect((await b(HARD_DELETE, { model: 'Company', id: globex.id })).data.hardDelete).toBe(true);
    expect(await record(b, 'Contact', eve.id)).toMatchObject({ companyId: null });
    expect(await record(a, 'Contact', cid.id)).toMatchObject({ companyId: kept.id });

    // A cleared row takes a new reference as before.
    expect((await a(UPDATE, { model: 'Contact', id: ann.id, data: { companyId: kept.id } })).data.update).toMatchObject({ companyId: kept.id });

    // A contact adding a reference to the row while it is being deleted (its transaction still open): the
    // delete waits for it, then clears its reference too, as `set null` did, instead of failing its check.
    const target = await create(a, 'Company', { name: 'Raced' });
    const writer = new pg.Client({ connectionString: service.database.url });
    await writer.connect();
    try {
      await writer.query('begin');
      await writer.query(`insert into "contact" ("id", "tenant_id", "name", "stage", "company_id") values ('late-1', 'tenant-a', 'Late', 'lead', $1)`, [target.id]);
      const deleting = a(HARD_DELETE, { model: 'Company', id: target.id });
      await waitForLockWait(writer);
      await writer.query('commit');
      expect((await deleting).data?.hardDelete).toBe(true);
    } finally {
      await writer.end();
    }
    expect(await record(a, 'Contact', 'late-1')).toMatchObject({ companyId: null });

    // Every statement was pinned to one tenant (the check throws on the first that is not; this file's own).
    const ours = installedCheck()?.violations.filter((v) => v.site.includes('records/lifecycle.ts') || v.site.includes('hard-delete.integration')) ?? [];
    expect(installedCheck()).not.toBeNull();
    expect(ours).toEqual([]);
  });
});
