import { beforeAll, describe, expect, it } from 'vitest';
import { loadModule, parseSync } from 'libpg-query';
import { analyzeStatement, SOME_TENANT } from '../../runtime/db/distributed/analyze.ts';

beforeAll(() => loadModule());

function analyze(text: string, values?: unknown[]) {
  const [{ stmt }] = parseSync(text).stmts!;
  const a = analyzeStatement(stmt, values);
  return { tenants: [...a.tenants], problems: a.problems.map((p) => `${p.kind} ${p.table}`) };
}

describe('which tenants a statement touches (ADR 025)', () => {
  it('pins a read by its tenant predicate, bound or literal, and the tenant-less scope by is null', () => {
    expect(analyze('select * from deal t where t.id = $1 and t.tenant_id = $2', ['d1', 'acme'])).toEqual({ tenants: ['acme'], problems: [] });
    expect(analyze(`select * from deal where tenant_id = 'acme'`)).toEqual({ tenants: ['acme'], problems: [] });
    expect(analyze('select * from deal t where t.tenant_id is null')).toEqual({ tenants: [null], problems: [] });
  });

  it('refuses a read of every shard and a statement over two tenants', () => {
    expect(analyze('select * from deal where amount > 3').problems).toEqual(['unpinned deal']);
    expect(analyze('select * from deal t where t.tenant_id = any($1)', [['a', 'b']]).problems).toEqual(['two-tenants deal']);
    expect(analyze(`select * from deal t where t.tenant_id in ('a', 'b')`).problems).toEqual(['two-tenants deal']);
    expect(analyze(`select * from deal t where t.tenant_id = 'a' or t.tenant_id = 'b'`).problems).toEqual(['unpinned deal']);
  });

  it('accepts a join on tenant_id and refuses a join on id alone', () => {
    const colocated = 'select * from deal d join company c on c.id = d.company_id and c.tenant_id = d.tenant_id where d.tenant_id = $1';
    expect(analyze(colocated, ['a'])).toEqual({ tenants: ['a'], problems: [] });
    const byId = 'select * from deal d join company c on c.id = d.company_id where d.tenant_id = $1';
    expect(analyze(byId, ['a']).problems).toEqual(['unpinned company']);
    const twoTenants = `select * from deal d join company c on c.id = d.company_id where d.tenant_id = 'a' and c.tenant_id = 'b'`;
    expect(analyze(twoTenants).problems).toEqual(['two-tenants deal, company']);
  });

  it('follows an insert\'s tenant_id through VALUES and through the CTE it selects from', () => {
    const create = `with created as (insert into deal (id, tenant_id) values ($1, $2::text) returning *),
      appended as (insert into svc_events (id, tenant_id) select c.id, c.tenant_id from created c)
      insert into svc_audit (entity_id, tenant_id) select id, tenant_id from created`;
    expect(analyze(create, ['d1', 'acme'])).toEqual({ tenants: ['acme'], problems: [] });
    expect(analyze('insert into deal (id) values ($1)', ['d1']).problems).toEqual(['unpinned deal']);
    expect(analyze(`insert into deal (id, tenant_id) values ('x', 'a'), ('y', 'b')`).problems).toEqual(['two-tenants deal']);
  });

  it('checks subqueries as levels of their own, correlated ones through the outer alias', () => {
    const correlated = `select * from deal t where t.tenant_id = $1 and exists (select 1 from note n where n.deal_id = t.id and n.tenant_id = t.tenant_id)`;
    expect(analyze(correlated, ['a'])).toEqual({ tenants: ['a'], problems: [] });
    const loose = 'select * from deal t where t.tenant_id = $1 and exists (select 1 from note n where n.deal_id = t.id)';
    expect(analyze(loose, ['a']).problems).toEqual(['unpinned note']);
    expect(analyze('select * from deal t where t.tenant_id = (select tenant_id from svc_users where id = $1)', ['u']).tenants).toEqual([SOME_TENANT]);
  });

  it('leaves reference and coordinator tables alone, and refuses an update that moves a row to another tenant', () => {
    expect(analyze('select * from svc_users where id = $1', ['u']).problems).toEqual([]);
    expect(analyze(`update svc_jobs set status = 'queued' where status = 'running'`).problems).toEqual([]);
    expect(analyze('update deal set tenant_id = $1 where id = $2 and tenant_id = $3', ['b', 'd', 'a']).problems).toEqual(['moves-tenant deal']);
  });
});

describe('the tenant-less scope', () => {
  it('is one tenant whether stored as null (a table not converted yet) or as the sentinel \'\' (layout 3, ADR 025)', () => {
    const publicRead = `select p.name from product_projection p where p.tenant_id = '' and exists
      (select 1 from product b where b.id = p.id and b.deleted_at is null and b.tenant_id is null)`;
    expect(analyze(publicRead)).toEqual({ tenants: [null], problems: [] });
  });

  it('is pinned by tenant_id = \'\', literal or bound, and by = any of the sentinel alone', () => {
    expect(analyze(`select * from deal t where t.tenant_id = ''`)).toEqual({ tenants: [null], problems: [] });
    expect(analyze('select * from deal t where t.tenant_id = $1::text', [''])).toEqual({ tenants: [null], problems: [] });
    expect(analyze('select * from deal t where t.tenant_id = any($1::text[])', [['', null]])).toEqual({ tenants: [null], problems: [] });
    expect(analyze(`insert into deal (id, tenant_id) values ('d1', '')`)).toEqual({ tenants: [null], problems: [] });
    // Layout 3's public read: projection and base both pinned by the sentinel, joined on (tenant_id, id).
    const layout3 = `select p.name from product_projection p join product b on b.tenant_id = p.tenant_id and b.id = p.id
      where p.tenant_id = $1::text and b.deleted_at is null`;
    expect(analyze(layout3, [''])).toEqual({ tenants: [null], problems: [] });
  });

  it('is not a real tenant: the sentinel and a tenant in one statement are two', () => {
    expect(analyze(`select * from deal t where t.tenant_id = any($1::text[])`, [['', 'acme']]).problems).toEqual(['two-tenants deal']);
    expect(analyze(`select * from deal t join note n on n.tenant_id = 'acme' and n.deal_id = t.id and n.tenant_id = t.tenant_id where t.tenant_id = ''`).problems)
      .toEqual(['two-tenants deal, note']);
  });
});

describe('waivers (ADR 025: what waits for the layout or the feed cursor)', () => {
  it('match their class of statement only, never a whole table', async () => {
    const { waiverOf } = await import('../../runtime/db/distributed/waivers.ts');
    const unpinned = (table: string) => ({ kind: 'unpinned' as const, table, message: '' });
    const prune = `with doomed as (select tenant_id, seq from svc_changes where occurred_at < now() - make_interval(secs => $1::double precision) limit $2::int),
      gone as (delete from svc_changes c using doomed d where c.tenant_id = d.tenant_id and c.seq = d.seq returning 1) select count(*)::int as n from gone`;
    expect(waiverOf(unpinned('svc_changes'), prune)).toMatch(/every shard/);
    expect(waiverOf(unpinned('svc_changes'), 'delete from svc_changes where id = $1')).toBeNull();
    expect(waiverOf(unpinned('deal'), 'select count(*)::int as n from (select 1 from "deal" limit $1::int) x')).toMatch(/diagnostics report/);
    expect(waiverOf(unpinned('deal'), 'select count(*)::int as n from (select 1 from "deal" t where t.amount > $1 limit $2::int) s')).toBeNull();
    expect(waiverOf(unpinned('deal'), 'update "deal" as t set "title" = $1 where t."id" = $2')).toBeNull();
    expect(waiverOf({ ...unpinned('svc_events'), kind: 'moves-tenant' }, 'update svc_jobs set x = 1; select pg_current_snapshot()')).toBeNull();
  });
});

describe('SVC_DISTRIBUTED_CHECK', () => {
  it('is off, refusing (1) or recording (report, to a file), and names itself when set wrong', async () => {
    const { checkModeFromEnv } = await import('../../runtime/db/distributed/index.ts');
    expect(checkModeFromEnv({})).toBeNull();
    expect(checkModeFromEnv({ SVC_DISTRIBUTED_CHECK: '0' })).toBeNull();
    expect(checkModeFromEnv({ SVC_DISTRIBUTED_CHECK: '1' })).toBe('throw');
    expect(checkModeFromEnv({ SVC_DISTRIBUTED_CHECK: 'report', SVC_DISTRIBUTED_CHECK_REPORT: '/tmp/x.jsonl' })).toBe('report');
    expect(() => checkModeFromEnv({ SVC_DISTRIBUTED_CHECK: 'report' })).toThrow(/^SVC_DISTRIBUTED_CHECK=report needs SVC_DISTRIBUTED_CHECK_REPORT/);
    expect(() => checkModeFromEnv({ SVC_DISTRIBUTED_CHECK: 'yes' })).toThrow(/^SVC_DISTRIBUTED_CHECK must be 1, report or 0/);
  });
});
