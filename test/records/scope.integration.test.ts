/**
 * Every statement of every records operation carries the caller's scope:
 * the statements are captured on their way to the real database and each
 * must hold the tenant predicate (or, for an insert, the tenant stamp).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Query } from '../../runtime/records/sql.ts';
import type { Caller } from '../../runtime/records/index.ts';
import { TenantScope } from '../../runtime/tenancy/index.ts';
import type { TestService } from '../helpers/service.ts';
import { startRecordsService } from './helpers.ts';

let service: TestService;
const captured: Query[] = [];

beforeAll(async () => {
  service = await startRecordsService();
  const deps = service.ctx.services.records.deps as { rows: (runner: unknown, query: Query) => Promise<unknown[]> };
  const run = deps.rows.bind(deps);
  deps.rows = (runner, query) => {
    captured.push(query);
    return run(runner, query);
  };
});
afterAll(() => service?.close());

const manager = { userId: 'scope-manager', role: 'Manager' as const, tenantId: 'tenant-s', sessionId: null, email: null };

function expectScoped(tenant: string) {
  expect(captured.length).toBeGreaterThan(0);
  for (const query of captured.splice(0)) {
    const insert = /^\s*(with .*)?insert into/is.test(query.text);
    expect(query.values, query.text).toContain(tenant);
    if (!insert) expect(query.text).toMatch(/"tenant_id" = \$\d+::text/);
  }
}

describe('records statements and the tenant scope', () => {
  it('every operation binds the caller\'s tenant in every statement', async () => {
    const records = service.ctx.services.records;
    const caller: Caller = { principal: manager, scope: TenantScope.of('tenant-s') };
    const company = await records.create(caller, 'Company', { name: 'Scoped' });
    expectScoped('tenant-s');
    await records.create(caller, 'Contact', { name: 'C', stage: 'lead', companyId: company.id as string });
    expectScoped('tenant-s');
    await records.get(caller, 'Company', company.id as string, ['contacts']);
    expectScoped('tenant-s');
    await records.list(caller, 'Contact', { where: { stage: 'lead' }, include: ['company'] });
    expectScoped('tenant-s');
    await records.page(caller, 'Company', { first: 5 });
    expectScoped('tenant-s');
    await records.update(caller, 'Company', company.id as string, { name: 'Scoped 2' });
    expectScoped('tenant-s');
    await records.updateMany(caller, 'Company', { name: 'Scoped 2' }, { employees: 3 });
    expectScoped('tenant-s');
    await records.delete(caller, 'Company', company.id as string);
    expectScoped('tenant-s');
    await records.deleted(caller, 'Company', {});
    expectScoped('tenant-s');
    await records.restore(caller, 'Company', company.id as string);
    expectScoped('tenant-s');
    await records.hardDelete(caller, 'Company', company.id as string);
    expectScoped('tenant-s');
  });

  it('the global scope reads only its own rows, stored with the tenant \'\'', async () => {
    const records = service.ctx.services.records;
    await records.list({ principal: { ...manager, tenantId: null }, scope: TenantScope.GLOBAL }, 'Company', {});
    const [query] = captured.splice(0);
    expect(query.text).toMatch(/t\."tenant_id" = \$\d+::text/);
    expect(query.values).toContain('');
  });
});
