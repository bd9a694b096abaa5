/** Every records statement is built in its tenant scope: one that forgets it cannot run. */
import { describe, expect, it } from 'vitest';
import { Params } from '../../runtime/records/sql.ts';
import { TenantScope } from '../../runtime/tenancy/index.ts';

describe('records Params', () => {
  it('refuses a statement that never rendered its tenant scope', () => {
    const p = new Params(TenantScope.of('t1'));
    p.add('x', 'text');
    expect(() => p.query('select 1 from "company" t where t."id" = $1')).toThrow(/tenant scope/);
  });

  it('renders the tenant predicate with a bound value, or `is null` for the global scope', () => {
    const tenant = new Params(TenantScope.of('t1'));
    expect(tenant.query(`select 1 where ${tenant.tenant()}`)).toEqual({ text: 'select 1 where t."tenant_id" = $1::text', values: ['t1'] });
    const global = new Params(TenantScope.GLOBAL);
    expect(global.query(`select 1 where ${global.tenant('r')}`)).toEqual({ text: 'select 1 where r."tenant_id" is null', values: [] });
  });

  it('stamps inserts with the scope\'s tenant', () => {
    const p = new Params(TenantScope.of('t2'));
    expect(p.query(`insert into x ("tenant_id") values (${p.stamp()})`).values).toEqual(['t2']);
  });
});
