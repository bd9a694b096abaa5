/**
 * A generated `@unique` through the running service: the tenant-leading index
 * (`<table>_<column>_tkey`) is still "unique among the live rows of a tenant",
 * and its violation still comes back as a VALIDATION_ERROR naming the field
 * (runtime/records/errors.ts reads the field from the index name).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, CREATE, startRecordsService, UPDATE } from '../records/helpers.ts';
import { FIXTURES } from './helpers.ts';

let service: TestService;

beforeAll(async () => {
  service = await startRecordsService({ fixture: join(FIXTURES, 'crm', 'schema.ts') });
});
afterAll(() => service?.close());

describe('@unique on the tenant-leading index', { timeout: 60_000 }, () => {
  it('refuses a duplicate in the same tenant with a VALIDATION_ERROR on the field, allows it in another tenant and after a delete', async () => {
    const t1 = await clientFor(service, { role: 'Admin', tenantId: 'unique-t1' });
    const t2 = await clientFor(service, { role: 'Admin', tenantId: 'unique-t2' });
    const first = await create(t1, 'Company', { name: 'Acme' });
    const duplicate = await t1(CREATE, { model: 'Company', data: { name: 'Acme' } });
    expect(duplicate.errors?.[0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'name' });
    expect(JSON.stringify(duplicate.body)).not.toMatch(/tkey|insert|constraint/i);
    await create(t2, 'Company', { name: 'Acme' });
    const other = await create(t1, 'Company', { name: 'Other' });
    const renamed = await t1(UPDATE, { model: 'Company', id: other.id, data: { name: 'Acme' } });
    expect(renamed.errors?.[0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'name' });
    const removed = await t1('mutation($model: String!, $id: ID!) { delete(model: $model, id: $id) }', { model: 'Company', id: first.id });
    expect(removed.errors).toBeUndefined();
    await create(t1, 'Company', { name: 'Acme' });
  });
});
