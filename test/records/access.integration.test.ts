/** Authentication, per-model access rules for every role, and tenant isolation of every operation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLES, type Role } from '../../runtime/ir/types.ts';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, post, RECORD, RECORDS, startRecordsService, UPDATE, type Gql } from './helpers.ts';

let service: TestService;

beforeAll(async () => {
  service = await startRecordsService();
});
afterAll(() => service?.close());

describe('authentication', () => {
  it('answers 401 in the GraphQL shape (UNAUTHORIZED) without a bearer token or with a bad one', async () => {
    const none = await post(service.url, { query: '{ records(model: "Company") }' });
    expect(none.status).toBe(401);
    expect(none.code).toBe('UNAUTHORIZED');
    const bad = await post(service.url, { query: '{ records(model: "Company") }' }, { authorization: 'Bearer not.a.jwt' });
    expect(bad.status).toBe(401);
    expect(bad.code).toBe('UNAUTHORIZED');
  });

  it('answers 400 VALIDATION_ERROR for a malformed request or document', async () => {
    const token = await service.token({ role: 'Admin' });
    const headers = { authorization: `Bearer ${token}` };
    const noQuery = await post(service.url, { variables: {} }, headers);
    expect(noQuery.status).toBe(400);
    expect(noQuery.code).toBe('VALIDATION_ERROR');
    const syntax = await post(service.url, { query: '{ records(' }, headers);
    expect(syntax.status).toBe(400);
    expect(syntax.code).toBe('VALIDATION_ERROR');
    const missingArg = await post(service.url, { query: '{ records }' }, headers);
    expect(missingArg.code).toBe('VALIDATION_ERROR');
  });

  it('names an unknown model as a VALIDATION_ERROR on field model', async () => {
    const admin = await clientFor(service, { role: 'Admin' });
    const r = await admin(RECORDS, { model: 'Nope' });
    expect(r.errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'model' });
    expect((await admin('{ records(model: "__proto__") }')).code).toBe('VALIDATION_ERROR');
  });
});

/** The fixture's rules (test/records/fixtures/records/schema.ts); Admin may always do everything. */
const RULES: Record<string, Record<'read' | 'create' | 'update' | 'delete', Role[] | 'authenticated'>> = {
  Company: { read: 'authenticated', create: ['Manager', 'Sales'], update: ['Manager', 'Sales'], delete: ['Manager'] },
  Contact: { read: ['Manager', 'Sales', 'Support'], create: ['Manager', 'Sales'], update: ['Manager', 'Sales', 'Support'], delete: ['Manager'] },
  Secret: { read: ['Manager'], create: ['Manager'], update: ['Manager'], delete: ['Manager'] },
};
const UPDATE_MANY = 'mutation($model: String!, $data: JSON!) { updateMany(model: $model, where: {id: "none"}, data: $data) }';
const allowed = (role: Role, model: string, op: keyof (typeof RULES)['Company']) => {
  const rule = RULES[model][op];
  return role === 'Admin' || rule === 'authenticated' || rule.includes(role);
};
const DATA: Record<string, Record<string, unknown>> = {
  Company: { name: 'Rules' }, Contact: { name: 'Rules', stage: 'lead' }, Secret: { label: 'Rules' },
};

describe('access rules', () => {
  for (const model of Object.keys(RULES)) {
    for (const role of ROLES) {
      it(`${role} on ${model}`, async () => {
        const admin = await clientFor(service, { role: 'Admin' });
        const gql = await clientFor(service, { role });
        const target = await create(admin, model, DATA[model]);
        const expectAccess = async (op: 'read' | 'create' | 'update' | 'delete', query: string, variables: Record<string, unknown>) => {
          const r = await gql(query, { model, ...variables });
          if (allowed(role, model, op)) expect(r.errors, `${role} ${op} ${model}`).toBeUndefined();
          else expect(r.code, `${role} ${op} ${model}`).toBe('FORBIDDEN');
        };
        await expectAccess('read', RECORDS, {});
        await expectAccess('read', RECORD, { id: target.id });
        await expectAccess('read', 'query($model: String!) { paginatedRecords(model: $model) { totalCount } }', {});
        await expectAccess('read', 'query($model: String!) { deletedRecords(model: $model) }', {});
        await expectAccess('read', 'query($model: String!, $id: ID!) { recordHistory(model: $model, id: $id) { version } }', { id: target.id });
        await expectAccess('create', 'mutation($model: String!, $data: JSON!) { create(model: $model, data: $data) }', { data: DATA[model] });
        await expectAccess('update', UPDATE, { id: target.id, data: DATA[model] });
        await expectAccess('update', UPDATE_MANY, { data: DATA[model] });
        await expectAccess('delete', 'mutation($model: String!, $id: ID!) { delete(model: $model, id: $id) }', { id: target.id });
        if (allowed(role, model, 'delete')) await expectAccess('delete', 'mutation($model: String!, $id: ID!) { restore(model: $model, id: $id) }', { id: target.id });
        else expect((await gql('mutation($model: String!, $id: ID!) { restore(model: $model, id: $id) }', { model, id: target.id })).code).toBe('FORBIDDEN');
        await expectAccess('delete', 'mutation($model: String!, $id: ID!) { hardDelete(model: $model, id: $id) }', { id: target.id });
      });
    }
  }

  it('include needs read access to the related model', async () => {
    const viewer = await clientFor(service, { role: 'Viewer' });
    const r = await viewer(RECORDS, { model: 'Company', include: ['contacts'] });
    expect(r.code).toBe('FORBIDDEN');
  });
});

describe('tenancy', () => {
  let a: Gql;
  let b: Gql;
  let ids: { company: string; contact: string; trashed: string };

  beforeAll(async () => {
    a = await clientFor(service, { role: 'Manager', tenantId: 'tenant-a' });
    b = await clientFor(service, { role: 'Manager', tenantId: 'tenant-b' });
    const company = await create(a, 'Company', { name: 'A Corp' });
    const contact = await create(a, 'Contact', { name: 'A person', stage: 'lead', companyId: company.id });
    const trashed = await create(a, 'Company', { name: 'A trash' });
    await a('mutation($id: ID!) { delete(model: "Company", id: $id) }', { id: trashed.id });
    ids = { company: company.id, contact: contact.id, trashed: trashed.id };
    expect(company.tenantId).toBe('tenant-a');
  });

  it('reads see only their tenant', async () => {
    expect((await b(RECORDS, { model: 'Company' })).data.records).toEqual([]);
    expect((await b(RECORD, { model: 'Company', id: ids.company })).data.record).toBeNull();
    expect((await b('{ paginatedRecords(model: "Company") { totalCount items } }')).data.paginatedRecords).toEqual({ totalCount: 0, items: [] });
    expect((await b('{ deletedRecords(model: "Company") }')).data.deletedRecords).toEqual([]);
    expect((await b('query($id: ID!) { recordHistory(model: "Company", id: $id) { version } }', { id: ids.company })).code).toBe('NOT_FOUND');
    expect((await a(RECORDS, { model: 'Company' })).data.records.map((c: any) => c.id)).toEqual([ids.company]);
    expect((await a('{ deletedRecords(model: "Company") }')).data.deletedRecords.map((c: any) => c.id)).toEqual([ids.trashed]);
  });

  it('writes cannot reach another tenant', async () => {
    expect((await b(UPDATE, { model: 'Company', id: ids.company, data: { name: 'Hijack' } })).code).toBe('NOT_FOUND');
    expect((await b('mutation { updateMany(model: "Company", where: {}, data: {employees: 9}) }')).data.updateMany).toBe(0);
    expect((await b('mutation($id: ID!) { delete(model: "Company", id: $id) }', { id: ids.company })).code).toBe('NOT_FOUND');
    expect((await b('mutation($id: ID!) { restore(model: "Company", id: $id) }', { id: ids.trashed })).code).toBe('NOT_FOUND');
    expect((await b('mutation($id: ID!) { hardDelete(model: "Company", id: $id) }', { id: ids.company })).code).toBe('NOT_FOUND');
    const link = await b('mutation($d: JSON!) { create(model: "Contact", data: $d) }', { d: { name: 'X', stage: 'lead', companyId: ids.company } });
    expect(link.errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'companyId' });
    const own = await create(b, 'Company', { name: 'B Corp' });
    expect(own.tenantId).toBe('tenant-b');
    expect((await a(RECORD, { model: 'Company', id: ids.company })).data.record.name).toBe('A Corp');
  });

  it('include stays within the tenant', async () => {
    const r = await a(RECORDS, { model: 'Contact', include: ['company'] });
    expect(r.data.records[0].company.id).toBe(ids.company);
    expect((await b(RECORDS, { model: 'Contact', include: ['company'] })).data.records).toEqual([]);
  });

  it('a tenant-bound user cannot name another tenant; a tenantless Admin scopes with X-Tenant-ID', async () => {
    const sneaky = await clientFor(service, { role: 'Manager', tenantId: 'tenant-b', header: 'tenant-a' });
    const refused = await sneaky(RECORDS, { model: 'Company' });
    expect(refused.status).toBe(403);
    expect(refused.code).toBe('FORBIDDEN');
    const explicitOwn = await clientFor(service, { role: 'Manager', tenantId: 'tenant-b', header: 'tenant-b' });
    expect((await explicitOwn(RECORDS, { model: 'Company' })).data.records.map((c: any) => c.name)).toEqual(['B Corp']);
    const admin = await clientFor(service, { role: 'Admin', header: 'tenant-a' });
    expect((await admin(RECORDS, { model: 'Company' })).data.records.map((c: any) => c.id)).toEqual([ids.company]);
    const globalAdmin = await clientFor(service, { role: 'Admin' });
    const global = (await globalAdmin(RECORDS, { model: 'Company', where: { tenantId: { isNull: false } } })).data.records;
    expect(global).toEqual([]);
  });

  it('refuses X-Tenant-ID from a tenant-less user that is not an Admin (403 FORBIDDEN, no data)', async () => {
    for (const role of ROLES.filter((r) => r !== 'Admin')) {
      const chooser = await clientFor(service, { role, userId: `self-registered-${role}`, header: 'tenant-a' });
      const r = await chooser(RECORDS, { model: 'Company' });
      expect(r.status).toBe(403);
      expect(r.code).toBe('FORBIDDEN');
      expect(r.data).toBeUndefined();
    }
    const viewer = await clientFor(service, { role: 'Viewer', userId: 'self-registered-Viewer' });
    expect((await viewer(RECORDS, { model: 'Company' })).data.records.map((c: any) => c.id)).not.toContain(ids.company);
  });
});
