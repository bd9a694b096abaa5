/**
 * The public read's plan at scale, where the global scope (the anonymous
 * caller's) is a small share of a big table: 1 row in 1,001, as in
 * `bench:scale` (1,000 tenants and the global scope). The statistics of the
 * product table and its projection are set to ten million rows, so the
 * planner sees about 10,000 global rows in each.
 *
 * The read must walk the projection's `(tenant_id, id)` index in order and
 * stop at its limit, checking each row's base by primary key. The plan it
 * replaced (2M rows: 7.2x its 10k time in bench:scale) joined every global
 * row of the projection with every global row of the base table and sorted
 * them: the planner, multiplying "the base row is global" by "the ids are
 * equal", expected two rows of the join, so it saw no point in stopping early.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import type { TestService } from '../helpers/service.ts';
import { captureStatements } from '../helpers/statements.ts';
import { startCatalog, testDatabase, until } from './helpers.ts';

const ROWS = 30_030;
const AT_SCALE = 10_000_000;
const ENV = { SVC_PUBLIC_READ_MODELS: 'Product', SVC_PUBLIC_READ_FIELDS_Product: 'name' };

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Parent Relationship'?: string;
  readonly Plans?: readonly PlanNode[];
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];
const describePlan = (plan: PlanNode) => nodes(plan).map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}${n['Relation Name'] ? ` on ${n['Relation Name']}` : ''}`).join(' / ');

describe('the public read at scale', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let client: pg.Client;
  let svc: TestService | null = null;

  beforeAll(async () => {
    database = await testDatabase();
    svc = await startCatalog({ database, env: ENV });
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    // The filter index is built once the service listens; its build resets the table's statistics: wait for it first.
    await until(() => client.query(`select 1 from pg_index where indexrelid = to_regclass('product_projection_name_public_idx') and indisvalid`),
      (r) => r.rowCount === 1, 30_000);
    await svc.close();
    svc = null;
    // 1,000 tenants and the global scope, interleaved as the bench seeds them: one global row in 1,001.
    await client.query(`insert into product (id, tenant_id, name, status)
      select '01PLAN' || lpad(n::text, 8, '0'), case when n % 1001 = 0 then '' else 't' || n % 1001 end, 'Plan ' || n, 'published'
        from generate_series(1, $1::int) n`, [ROWS]);
    await client.query(`insert into product_projection (id, tenant_id, name) select id, coalesce(tenant_id, ''), name from product`);
    await client.query('analyze product, product_projection');
    await client.query(`update pg_class set reltuples = $1 where relname = any($2) and relnamespace = current_schema()::regnamespace`,
      [AT_SCALE, ['product', 'product_projection']]);
  });
  afterAll(async () => {
    await svc?.close();
    await client?.end();
    await database?.drop();
  });

  it.each([
    ['?limit=20', 'product_projection_pkey'], // layout 3: the key (tenant_id, id) is the tenant's list order
    ['?name=Plan%201001', 'product_projection_name_public_idx'],
  ])('/public/records/Product%s reads its rows in order through %s and checks each base row by key', async (query, index) => {
    const recording = captureStatements();
    try {
      svc = await startCatalog({ database, env: ENV });
      const response = await fetch(`${svc.url}/public/records/Product${query}`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { items: unknown[] }).items.length).toBeGreaterThan(0);
    } finally {
      recording.stop();
      await svc?.close();
      svc = null;
    }
    const read = recording.sent.filter((s) => /from "product_projection" p\b/.test(s.text));
    expect(read).toHaveLength(1);
    const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`explain (format json) ${read[0].text}`, read[0].values);
    const plan = rows[0]['QUERY PLAN'][0].Plan;
    const all = nodes(plan);
    const shape = describePlan(plan);
    expect(plan['Node Type'], shape).toBe('Limit');
    // No sort of the scope's rows, no join over them: the projection in index order, each base row by its key.
    expect(all.filter((n) => ['Sort', 'Incremental Sort', 'Hash Join', 'Merge Join', 'Hash', 'Bitmap Heap Scan', 'Seq Scan'].includes(n['Node Type'])), shape).toEqual([]);
    expect(all.some((n) => n['Node Type'] === 'Index Scan' && n['Relation Name'] === 'product_projection' && n['Index Name'] === index), shape).toBe(true);
    expect(all.filter((n) => n['Relation Name'] === 'product').map((n) => `${n['Node Type']} ${n['Index Name']}`), shape).toEqual(['Index Scan product_pkey']);
  });
});
