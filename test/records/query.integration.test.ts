/** Reads over real HTTP: where operators and combinators, orderBy, limits, cursors, include batching. */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { recordStatements } from '../helpers/statements.ts';
import { clientFor, create, RECORD, RECORDS, startRecordsService, type Gql } from './helpers.ts';

let service: TestService;
let gql: Gql;
const names = (rows: Array<{ name: string }>) => rows.map((r) => r.name);

async function list(variables: Record<string, unknown>) {
  const r = await gql(RECORDS, { model: 'Company', ...variables });
  if (r.errors) throw new Error(JSON.stringify(r.errors));
  return r.data.records;
}

async function codeOf(variables: Record<string, unknown>) {
  const r = await gql(RECORDS, { model: 'Company', ...variables });
  expect(r.errors?.[0]?.message ?? '').not.toMatch(/syntax|select |column "/i);
  return { code: r.code, field: r.errors?.[0]?.extensions.field };
}

beforeAll(async () => {
  service = await startRecordsService();
  gql = await clientFor(service, { role: 'Manager' });
  const rows = [
    { name: 'Alpha', employees: 10, active: true, email: 'a@x.io', foundedAt: '2001-01-01T00:00:00Z' },
    { name: 'Beta', employees: 20, active: false, foundedAt: '2002-01-01T00:00:00Z' },
    { name: 'Gamma', employees: 20, active: true, email: 'g@y.io' },
    { name: 'Delta 50%', employees: 40 },
    { name: 'Epsilon_x', employees: null },
  ];
  for (const row of rows) await create(gql, 'Company', row);
});
afterAll(() => service?.close());

describe('where', () => {
  it.each([
    [{ name: 'Alpha' }, ['Alpha']],
    [{ name: { eq: 'Beta' } }, ['Beta']],
    [{ employees: { ne: 20 } }, ['Alpha', 'Delta 50%', 'Epsilon_x']],
    [{ employees: { gt: 10 } }, ['Beta', 'Gamma', 'Delta 50%']],
    [{ employees: { gte: 20, lt: 40 } }, ['Beta', 'Gamma']],
    [{ employees: { lte: 10 } }, ['Alpha']],
    [{ employees: { in: [10, 40] } }, ['Alpha', 'Delta 50%']],
    [{ employees: { notIn: [20] } }, ['Alpha', 'Delta 50%', 'Epsilon_x']],
    [{ employees: { in: [] } }, []],
    [{ employees: { notIn: [] } }, ['Alpha', 'Beta', 'Gamma', 'Delta 50%', 'Epsilon_x']],
    [{ name: { contains: 'lt' } }, ['Delta 50%']],
    [{ name: { contains: '50%' } }, ['Delta 50%']],
    [{ name: { contains: '_' } }, ['Epsilon_x']],
    [{ name: { startsWith: 'Ga' } }, ['Gamma']],
    [{ name: { endsWith: 'ta' } }, ['Beta']],
    [{ email: { isNull: true } }, ['Beta', 'Delta 50%', 'Epsilon_x']],
    [{ email: { isNull: false } }, ['Alpha', 'Gamma']],
    [{ email: null }, ['Beta', 'Delta 50%', 'Epsilon_x']],
    [{ active: true }, ['Alpha', 'Gamma']],
    [{ foundedAt: { gte: '2002-01-01T00:00:00Z' } }, ['Beta']],
    [{ founded_at: { lt: '2002-01-01T00:00:00Z' } }, ['Alpha']],
    [{ OR: [{ name: 'Alpha' }, { employees: 40 }] }, ['Alpha', 'Delta 50%']],
    [{ AND: [{ employees: 20 }, { active: true }] }, ['Gamma']],
    [{ NOT: [{ employees: 20 }] }, ['Alpha', 'Delta 50%', 'Epsilon_x']],
    [{ OR: [{ AND: [{ employees: 20 }, { active: false }] }, { NOT: { name: { startsWith: 'A' } }, employees: 10 }] }, ['Beta']],
    [{ OR: [] }, []],
    [{ AND: [] }, ['Alpha', 'Beta', 'Gamma', 'Delta 50%', 'Epsilon_x']],
  ])('%j', async (where, expected) => {
    expect(names(await list({ where }))).toEqual(expected);
  });

  it.each([
    ['unknown field', { colour: 'red' }, 'where.colour'],
    ['unknown operator', { name: { like: '%' } }, 'where.name'],
    ['in with a non-array', { employees: { in: 10 } }, 'where.employees.in'],
    ['notIn with a non-array', { employees: { notIn: 'x' } }, 'where.employees.notIn'],
    ['wrong value type', { employees: { gt: 'ten' } }, 'where.employees.gt'],
    ['contains on a number', { employees: { contains: '1' } }, 'where.employees.contains'],
    ['isNull not boolean', { email: { isNull: 'yes' } }, 'where.email.isNull'],
    ['a bare list', { employees: [1, 2] }, 'where.employees'],
    ['OR not a list', { OR: 'x' }, 'where.OR'],
    ['bad date', { foundedAt: { gt: 'soon' } }, 'where.foundedAt.gt'],
    ['SQL in a field name', { 'name" = name or 1=1 --': 'x' }, 'where.name" = name or 1=1 --'],
  ])('%s is a VALIDATION_ERROR', async (_name, where, field) => {
    expect(await codeOf({ where })).toEqual({ code: 'VALIDATION_ERROR', field });
  });

  it('binds values: SQL in a value is just text', async () => {
    expect(await list({ where: { name: "x' or '1'='1" } })).toEqual([]);
  });
});

describe('orderBy, limit and offset', () => {
  it('orders by several keys, ties broken by id', async () => {
    const rows = await list({ orderBy: { employees: 'DESC', name: 'ASC' } });
    expect(names(rows)).toEqual(['Epsilon_x', 'Delta 50%', 'Beta', 'Gamma', 'Alpha']); // nulls first when descending
    const tied = await list({ orderBy: { employees: 'ASC' }, where: { employees: 20 } });
    expect(tied.map((r: any) => r.id)).toEqual([...tied.map((r: any) => r.id)].sort());
  });

  it('accepts a list form and snake_case keys', async () => {
    const rows = await list({ orderBy: [{ active: 'ASC' }, { founded_at: 'DESC' }] });
    // active: false, true, true, null, null; within true: foundedAt null first when descending.
    expect(names(rows)).toEqual(['Beta', 'Gamma', 'Alpha', 'Delta 50%', 'Epsilon_x']);
  });

  it('applies limit and offset', async () => {
    expect(names(await list({ orderBy: { name: 'ASC' }, limit: 2, offset: 1 }))).toEqual(['Beta', 'Delta 50%']);
  });

  it.each([
    [{ orderBy: { colour: 'ASC' } }, 'orderBy.colour'],
    [{ orderBy: { name: 'UP' } }, 'orderBy.name'],
    [{ orderBy: { address: 'ASC' } }, 'orderBy.address'],
    [{ limit: 0 }, 'limit'],
    [{ offset: -1 }, 'offset'],
  ])('%j is a VALIDATION_ERROR', async (variables, field) => {
    expect(await codeOf(variables)).toEqual({ code: 'VALIDATION_ERROR', field });
  });

  it('defaults to 100 rows and allows 1000', async () => {
    const bulk = await clientFor(service, { role: 'Manager', tenantId: 'bulk', userId: 'manager-bulk' });
    const values = Array.from({ length: 120 }, (_, i) => `(\$${i + 1}, 'bulk', 'Bulk ${i}')`).join(', ');
    await service.ctx.db.none(`insert into "company" ("id", "tenant_id", "name") values ${values}`, Array.from({ length: 120 }, (_, i) => `BULK${String(i).padStart(22, '0')}`));
    expect((await bulk(RECORDS, { model: 'Company' })).data.records).toHaveLength(100);
    expect((await bulk(RECORDS, { model: 'Company', limit: 1000 })).data.records).toHaveLength(120);
  });

  it('clamps limit above 1000 and first above 100 (CONTRACT section 4), never refuses them', async () => {
    const bulk = await clientFor(service, { role: 'Manager', tenantId: 'bulk', userId: 'manager-bulk' });
    const r = await bulk(RECORDS, { model: 'Company', limit: 1_000_000 });
    expect(r.errors).toBeUndefined();
    expect(r.data.records).toHaveLength(120);
    const page = await bulk('{ paginatedRecords(model: "Company", first: 5000) { items } }');
    expect(page.errors).toBeUndefined();
    expect(page.data.paginatedRecords.items).toHaveLength(100);
  });

  it('record of an absent id is null, not an error', async () => {
    const r = await (await clientFor(service, { role: 'Admin' }))(RECORD, { model: 'Company', id: 'no-such-id' });
    expect(r.errors).toBeUndefined();
    expect(r.data).toEqual({ record: null });
  });
});

const PAGE = `query($where: JSON, $orderBy: JSON, $first: Int, $after: String) {
  paginatedRecords(model: "Contact", where: $where, orderBy: $orderBy, first: $first, after: $after) {
    items totalCount pageInfo { hasNextPage endCursor } } }`;

describe('paginatedRecords', () => {
  it('walks keyset pages, stable under concurrent inserts, with totalCount', async () => {
    const pager = await clientFor(service, { role: 'Manager', tenantId: 'pages', userId: 'manager-pages' });
    for (let i = 0; i < 9; i++) await create(pager, 'Contact', { name: `P${i}`, stage: 'lead', order: i % 3 });
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const r = await pager(PAGE, { first: 4, after, orderBy: { order: 'DESC' } });
      expect(r.errors).toBeUndefined();
      const page = r.data.paginatedRecords;
      seen.push(...page.items.map((c: any) => c.name));
      if (pages === 0) {
        expect(page.totalCount).toBe(9);
        // Rows inserted before the cursor's position must not shift later pages.
        await create(pager, 'Contact', { name: 'Late high', stage: 'lead', order: 5 });
      }
      pages++;
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    expect(pages).toBe(3);
    expect(seen).toHaveLength(9);
    expect(new Set(seen).size).toBe(9);
  });

  it('defaults first to 20, clamps it to 100, refuses foreign cursors', async () => {
    const pager = await clientFor(service, { role: 'Manager', tenantId: 'pages2', userId: 'manager-pages2' });
    for (let i = 0; i < 25; i++) await create(pager, 'Contact', { name: `D${i}`, stage: 'won' });
    const r = await pager(PAGE, {});
    expect(r.data.paginatedRecords.items).toHaveLength(20);
    expect(r.data.paginatedRecords.pageInfo.hasNextPage).toBe(true);
    expect((await pager(PAGE, { first: 101 })).data.paginatedRecords.items).toHaveLength(25);
    expect((await pager(PAGE, { first: 0 })).errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'first' });
    const cursor = r.data.paginatedRecords.pageInfo.endCursor;
    expect((await pager(PAGE, { after: cursor, orderBy: { name: 'ASC' } })).errors![0].extensions.field).toBe('after');
    expect((await pager(PAGE, { after: 'garbage!' })).errors![0].extensions.field).toBe('after');
  });
});

describe('include', () => {
  it('embeds belongsTo and hasMany relations, live rows only', async () => {
    const inc = await clientFor(service, { role: 'Manager', tenantId: 'inc', userId: 'manager-inc' });
    const company = await create(inc, 'Company', { name: 'Parent' });
    const kept = await create(inc, 'Contact', { name: 'Kept', stage: 'lead', companyId: company.id });
    const gone = await create(inc, 'Contact', { name: 'Gone', stage: 'lead', companyId: company.id });
    await inc('mutation($id: ID!) { delete(model: "Contact", id: $id) }', { id: gone.id });
    const parents = await inc(RECORDS, { model: 'Company', include: ['contacts'] });
    expect(parents.data.records[0].contacts.map((c: any) => c.id)).toEqual([kept.id]);
    const children = await inc(RECORDS, { model: 'Contact', include: ['company'] });
    expect(children.data.records[0].company).toMatchObject({ id: company.id, name: 'Parent' });
    expect((await inc(RECORDS, { model: 'Contact', include: ['nope'] })).errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'include' });
  });

  it('loads 100 rows with two includes in a constant number of queries', async () => {
    const inc = await clientFor(service, { role: 'Manager', tenantId: 'batch', userId: 'manager-batch' });
    const companies: Array<{ id: string }> = [];
    for (let i = 0; i < 10; i++) companies.push(await create(inc, 'Company', { name: `Batch ${i}` }));
    const values = Array.from({ length: 100 }, (_, i) => `('B${String(i).padStart(25, '0')}', 'batch', 'C${i}', 'lead', '${companies[i % 10].id}')`).join(', ');
    await service.ctx.db.none(`insert into "contact" ("id", "tenant_id", "name", "stage", "company_id") values ${values}`);
    // Only the request's own statements: the feed, sweeps and heartbeats run beside it (test/helpers/statements.ts).
    const recorder = recordStatements(service.ctx.server);
    onTestFinished(() => recorder.restore());
    const count = async (include: string[], model: string) => {
      const r = await inc(RECORDS, { model, include, limit: 1000 });
      expect(r.errors).toBeUndefined();
      return { queries: recorder.last().length, rows: r.data.records };
    };
    await count([], 'Contact'); // the session is looked up once, then cached
    const plain = await count([], 'Contact');
    const withCompany = await count(['company'], 'Contact');
    const withTwo = await count(['contacts', 'contacts'], 'Company');
    expect(plain.rows).toHaveLength(100);
    expect(withCompany.rows.every((c: any) => c.company?.id === c.companyId)).toBe(true);
    expect(withCompany.queries).toBe(plain.queries + 1);
    expect(withTwo.rows.filter((c: any) => c.contacts.length === 10)).toHaveLength(10);
    expect(withTwo.queries).toBe(plain.queries + 1);
    expect(plain.queries).toBe(1);
  });
});
