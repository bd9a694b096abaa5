/**
 * `paginatedRecords { totalCount totalCountIsEstimate }` over HTTP (ADR 022):
 * exact up to SVC_GRAPHQL_EXACT_COUNT_LIMIT (100 here, so a few thousand rows
 * cross it), the planner's estimate beyond, flagged; each tenant counts only
 * its own rows either way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { clientFor, startRecordsService, type Gql } from './helpers.ts';

const BOUND = 100;
const BIG = 3_000;
const SMALL = 40;

const PAGE = `query($where: JSON) {
  paginatedRecords(model: "Company", where: $where, first: 5) { items totalCount totalCountIsEstimate pageInfo { hasNextPage } } }`;

let service: TestService;

beforeAll(async () => {
  service = await startRecordsService({ env: { SVC_GRAPHQL_EXACT_COUNT_LIMIT: String(BOUND) } });
  const seed = (tenant: string, n: number) => service.ctx.db.none(
    `insert into company (id, tenant_id, name, employees)
     select $1 || '-' || lpad(i::text, 6, '0'), $1, 'Company ' || i, i % 10 from generate_series(1, $2::int) i`, [tenant, n]);
  await seed('big', BIG);
  await seed('small', SMALL);
  await service.ctx.db.none('analyze company');
}, 60_000);
afterAll(() => service?.close());

async function page(gql: Gql, where?: unknown) {
  const r = await gql(PAGE, { where });
  expect(r.errors).toBeUndefined();
  return r.data.paginatedRecords as { items: unknown[]; totalCount: number; totalCountIsEstimate: boolean; pageInfo: { hasNextPage: boolean } };
}

describe('a bounded totalCount', () => {
  it('is exact, and says so, while the rows matching stay within the bound', async () => {
    const small = await clientFor(service, { role: 'Manager', tenantId: 'small', userId: 'manager-small' });
    expect(await page(small)).toMatchObject({ totalCount: SMALL, totalCountIsEstimate: false, pageInfo: { hasNextPage: true } });
    expect(await page(small, { employees: 3 })).toMatchObject({ totalCount: 4, totalCountIsEstimate: false });
    // A big tenant under a narrow filter counts exactly too: the bound is on the rows matching, not the table.
    const big = await clientFor(service, { role: 'Manager', tenantId: 'big', userId: 'manager-big' });
    expect(await page(big, { name: 'Company 7' })).toMatchObject({ totalCount: 1, totalCountIsEstimate: false });
    // Exactly the bound is still exact; one row more is not.
    expect(await page(big, { employees: 3, id: { lte: 'big-001000' } })).toMatchObject({ totalCount: BOUND, totalCountIsEstimate: false });
    const over = await page(big, { employees: 3, id: { lte: 'big-001010' } });
    expect(over.totalCountIsEstimate).toBe(true);
    expect(over.totalCount).toBeGreaterThan(BOUND);
  });

  it('beyond the bound is the planner\'s estimate of the same filtered read, flagged, and above the bound', async () => {
    const big = await clientFor(service, { role: 'Manager', tenantId: 'big', userId: 'manager-big' });
    const all = await page(big);
    expect(all.totalCountIsEstimate).toBe(true);
    expect(all.items).toHaveLength(5);
    expect(all.totalCount).toBeGreaterThan(BOUND);
    expect(all.totalCount).toBeGreaterThan(BIG / 2);
    expect(all.totalCount).toBeLessThan(BIG * 2);
    // The filter weighs in: a tenth of the tenant's rows (300) is estimated as about that, not as the tenant's 3,000.
    const tenth = await page(big, { employees: 3 });
    expect(tenth.totalCountIsEstimate).toBe(true);
    expect(tenth.totalCount).toBeGreaterThan(BOUND);
    expect(tenth.totalCount).toBeLessThan(BIG / 3);
  });

  it('stays inside the caller\'s tenant: another tenant, or the global scope, counts none of these rows', async () => {
    const empty = await clientFor(service, { role: 'Manager', tenantId: 'empty', userId: 'manager-empty' });
    expect(await page(empty)).toMatchObject({ items: [], totalCount: 0, totalCountIsEstimate: false });
    const global = await clientFor(service, { role: 'Manager', userId: 'manager-global' });
    expect(await page(global)).toMatchObject({ items: [], totalCount: 0, totalCountIsEstimate: false });
    const small = await clientFor(service, { role: 'Manager', tenantId: 'small', userId: 'manager-small' });
    expect((await page(small)).totalCount).toBe(SMALL);
  });

  it('answers the flag alone, counting as for totalCount', async () => {
    const big = await clientFor(service, { role: 'Manager', tenantId: 'big', userId: 'manager-big' });
    const r = await big('{ paginatedRecords(model: "Company") { totalCountIsEstimate } }');
    expect(r.data.paginatedRecords).toEqual({ totalCountIsEstimate: true });
  });
});
