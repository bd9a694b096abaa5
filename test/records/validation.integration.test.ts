/** Create/update over real HTTP: casing, output shape, validation from the schema, partial updates. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, CREATE, RECORD, startRecordsService, UPDATE, type Gql } from './helpers.ts';

let service: TestService;
let gql: Gql;

beforeAll(async () => {
  service = await startRecordsService();
  gql = await clientFor(service, { role: 'Manager' });
});
afterAll(() => service?.close());

async function expectInvalid(model: string, data: Record<string, unknown>, field: string) {
  const r = await gql(CREATE, { model, data });
  expect(r.code, JSON.stringify(r.body)).toBe('VALIDATION_ERROR');
  expect(r.errors![0].extensions.field).toBe(field);
  expect(r.errors![0].message).not.toMatch(/insert|select|column|relation "/i);
}

describe('create', () => {
  it('returns camelCase output with the system fields', async () => {
    const company = await create(gql, 'Company', { name: 'Acme', foundedAt: '2020-01-02T03:04:05.123Z' });
    expect(Object.keys(company)).toEqual(expect.arrayContaining(['id', 'tenantId', 'createdAt', 'updatedAt', 'deletedAt', 'name', 'foundedAt']));
    expect(company.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(company.deletedAt).toBeNull();
    expect(new Date(company.foundedAt).toISOString()).toBe('2020-01-02T03:04:05.123Z');
    expect(Number.isNaN(Date.parse(company.createdAt))).toBe(false);
  });

  it('accepts snake_case input and returns a belongsTo as companyId', async () => {
    const company = await create(gql, 'Company', { name: 'Snake Co', founded_at: '2021-01-01T00:00:00Z' });
    expect(company.foundedAt).toMatch(/^2021-01-01T00:00:00/);
    const a = await create(gql, 'Contact', { name: 'A', stage: 'lead', company_id: company.id });
    const b = await create(gql, 'Contact', { name: 'B', stage: 'won', companyId: company.id });
    expect(a.companyId).toBe(company.id);
    expect(b.companyId).toBe(company.id);
    expect(a).not.toHaveProperty('company_id');
  });

  it('works with fields named order, user and select', async () => {
    const c = await create(gql, 'Contact', { name: 'Kw', stage: 'lead', order: 3, user: 'u1', select: 's1' });
    expect(c).toMatchObject({ order: 3, user: 'u1', select: 's1' });
    const r = await gql(UPDATE, { model: 'Contact', id: c.id, data: { order: 4, select: 's2' } });
    expect(r.data.update).toMatchObject({ order: 4, select: 's2', user: 'u1' });
  });

  it('stores embedded blocks and scalar lists', async () => {
    const c = await create(gql, 'Company', { name: 'Emb', address: { city: 'Paris', zip: '75001' }, tags: ['x', 'y'] });
    expect(c.address).toEqual({ city: 'Paris', zip: '75001' });
    expect(c.tags).toEqual(['x', 'y']);
  });

  it('refuses a belongsTo id that does not exist', async () => {
    await expectInvalid('Contact', { name: 'X', stage: 'lead', companyId: 'nope' }, 'companyId');
  });
});

describe('validation', () => {
  it.each([
    ['required missing', 'Company', {}, 'name'],
    ['required null', 'Company', { name: null }, 'name'],
    ['required empty string', 'Contact', { name: '', stage: 'lead' }, 'name'],
    ['wrong type string', 'Company', { name: 42 }, 'name'],
    ['wrong type number', 'Company', { name: 'Ok', employees: '5' }, 'employees'],
    ['wrong type boolean', 'Company', { name: 'Ok', active: 'yes' }, 'active'],
    ['bad date', 'Company', { name: 'Ok', foundedAt: 'yesterday' }, 'foundedAt'],
    ['email', 'Company', { name: 'Ok', email: 'not-an-email' }, 'email'],
    ['min length', 'Company', { name: 'A' }, 'name'],
    ['max length', 'Company', { name: 'x'.repeat(41) }, 'name'],
    ['min value', 'Company', { name: 'Ok', employees: -1 }, 'employees'],
    ['max value', 'Company', { name: 'Ok', employees: 1001 }, 'employees'],
    ['numeric', 'Company', { name: 'Ok', phone: '12a4' }, 'phone'],
    ['list max items', 'Company', { name: 'Ok', tags: ['a', 'b', 'c', 'd'] }, 'tags'],
    ['list item type', 'Company', { name: 'Ok', tags: [1] }, 'tags.0'],
    ['enum value', 'Contact', { name: 'Ok', stage: 'maybe' }, 'stage'],
    ['unknown field', 'Company', { name: 'Ok', colour: 'red' }, 'colour'],
    ['system field', 'Company', { name: 'Ok', id: 'mine' }, 'id'],
    ['relation name instead of id', 'Contact', { name: 'Ok', stage: 'lead', company: 'x' }, 'company'],
    ['hasMany', 'Company', { name: 'Ok', contacts: [] }, 'contacts'],
    ['embedded not an object', 'Company', { name: 'Ok', address: 'Paris' }, 'address'],
    ['embedded required field', 'Company', { name: 'Ok', address: { street: 'Main' } }, 'address.city'],
    ['embedded min', 'Company', { name: 'Ok', address: { city: 'P' } }, 'address.city'],
    ['embedded numeric', 'Company', { name: 'Ok', address: { city: 'Paris', zip: 'abc' } }, 'address.zip'],
    ['embedded unknown field', 'Company', { name: 'Ok', address: { city: 'Paris', planet: 'Mars' } }, 'address.planet'],
  ])('%s is a VALIDATION_ERROR naming the field', async (_name, model, data, field) => {
    await expectInvalid(model, data, field);
  });

  it('refuses data that is not an object', async () => {
    const r = await gql(CREATE, { model: 'Company', data: ['x'] });
    expect(r.code).toBe('VALIDATION_ERROR');
    expect(r.errors![0].extensions.field).toBe('data');
  });

  it('accepts the smallest and largest allowed values', async () => {
    await create(gql, 'Company', { name: 'Ab', employees: 0, phone: '0123' });
    await create(gql, 'Company', { name: 'x'.repeat(40), employees: 1000, tags: ['a', 'b', 'c'] });
  });
});

describe('update', () => {
  it('validates only the fields present', async () => {
    const c = await create(gql, 'Company', { name: 'Partial', employees: 3 });
    const r = await gql(UPDATE, { model: 'Company', id: c.id, data: { employees: 4 } });
    expect(r.errors).toBeUndefined();
    expect(r.data.update).toMatchObject({ name: 'Partial', employees: 4 });
    expect(r.data.update.updatedAt >= c.updatedAt).toBe(true);
  });

  it('refuses "" and null on a required string, accepts null on nullable columns', async () => {
    const c = await create(gql, 'Company', { name: 'Nulls', employees: 3, active: true, foundedAt: '2020-01-01T00:00:00Z', address: { city: 'Rome' }, tags: ['a'] });
    for (const value of ['', null]) {
      const r = await gql(UPDATE, { model: 'Company', id: c.id, data: { name: value } });
      expect(r.code).toBe('VALIDATION_ERROR');
      expect(r.errors![0].extensions.field).toBe('name');
    }
    const cleared = await gql(UPDATE, { model: 'Company', id: c.id, data: { employees: null, active: null, foundedAt: null, address: null, tags: null } });
    expect(cleared.errors).toBeUndefined();
    expect(cleared.data.update).toMatchObject({ name: 'Nulls', employees: null, active: null, foundedAt: null, address: null, tags: null });
  });

  it('is NOT_FOUND for a missing id, never an empty object', async () => {
    const r = await gql(UPDATE, { model: 'Company', id: '01HZZZZZZZZZZZZZZZZZZZZZZZ', data: { employees: 1 } });
    expect(r.code).toBe('NOT_FOUND');
    expect(r.data).toBeNull();
  });

  it('refuses an empty patch and unknown fields', async () => {
    const c = await create(gql, 'Company', { name: 'Empty' });
    expect((await gql(UPDATE, { model: 'Company', id: c.id, data: {} })).code).toBe('VALIDATION_ERROR');
    const r = await gql(UPDATE, { model: 'Company', id: c.id, data: { nope: 1 } });
    expect(r.errors![0].extensions.field).toBe('nope');
  });

  it('record returns the current state and null for an unknown id', async () => {
    const c = await create(gql, 'Company', { name: 'Fetch' });
    expect((await gql(RECORD, { model: 'Company', id: c.id })).data.record.name).toBe('Fetch');
    expect((await gql(RECORD, { model: 'Company', id: 'missing' })).data.record).toBeNull();
  });
});
