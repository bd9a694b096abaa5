/** Every records statement is built in its tenant scope: one that forgets it cannot run. */
import { describe, expect, it } from 'vitest';
import { scopedQuery } from '../../runtime/records/sql.ts';
import { sql } from '../../runtime/sql/index.ts';
import { TenantScope } from '../../runtime/tenancy/index.ts';

describe('records statements and their scope', () => {
  it('refuses a statement that never rendered its tenant scope', () => {
    const scope = TenantScope.of('t1');
    expect(() => scopedQuery(scope, sql`select 1 from "company" t where t."id" = ${sql.value('x', 'text')}`)).toThrow(/scope/);
  });

  it('refuses a statement that rendered another scope', () => {
    const statement = sql`select 1 from "company" t where ${TenantScope.of('t1').predicate()}`;
    expect(() => scopedQuery(TenantScope.of('t1'), statement)).toThrow(/scope/);
  });

  it('renders the tenant predicate with a bound value, \'\' for the global scope (layout 3)', () => {
    const tenant = TenantScope.of('t1');
    expect(scopedQuery(tenant, sql`select 1 where ${tenant.predicate()}`))
      .toEqual({ text: 'select 1 where t."tenant_id" = $1::text', values: ['t1'] });
    expect(scopedQuery(TenantScope.GLOBAL, sql`select 1 where ${TenantScope.GLOBAL.predicate('r')}`))
      .toEqual({ text: 'select 1 where r."tenant_id" = $1::text', values: [''] });
    expect(scopedQuery(TenantScope.GLOBAL, sql`select ${TenantScope.GLOBAL.stamp()}`)).toEqual({ text: 'select $1::text', values: [''] });
    // Tables whose global scope stays a null tenant (svc_jobs, svc_workflow_runs, ...).
    expect(scopedQuery(TenantScope.GLOBAL, sql`select 1 where ${TenantScope.GLOBAL.localPredicate('j')}`))
      .toEqual({ text: 'select 1 where j."tenant_id" is null', values: [] });
  });

  it('stamps inserts with the scope\'s tenant', () => {
    const scope = TenantScope.of('t2');
    expect(scopedQuery(scope, sql`insert into x ("tenant_id") values (${scope.stamp()})`).values).toEqual(['t2']);
  });
});
