/**
 * Plans at scale, on a few thousand rows: the statistics of the big tables
 * (base, projection, event log, audit) are set to ten million rows, so that
 * Postgres plans as it would on a big database. Every statement that a start
 * with a projection build, the live refresh, GET /storage/diagnostics (with
 * and without its bounds) and the projection read (public read) send is then
 * EXPLAINed; none may scan a big table whole (a sequential scan that no
 * Limit bounds). A statement that loses its index fails here, not in
 * production.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import type { TestService } from '../helpers/service.ts';
import { captureStatements } from '../helpers/statements.ts';
import { adminFetch, startCatalog, testDatabase, until, writer } from './helpers.ts';

const ROWS = 3_000;
const AT_SCALE = 10_000_000;
const BIG = ['product', 'product_projection', 'svc_events', 'svc_audit'];
const ENV = { SVC_PUBLIC_READ_MODELS: 'Product', SVC_PUBLIC_READ_FIELDS_Product: 'name', SVC_PROJECTION_BUILD_BATCH: '1000' };

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

/** Sequential scans of a big table with no Limit above them. */
function unboundedScans(node: PlanNode, limited = false): string[] {
  const bounded = limited || node['Node Type'] === 'Limit';
  const own = node['Node Type'] === 'Seq Scan' && BIG.includes(node['Relation Name'] ?? '') && !bounded ? [node['Relation Name']!] : [];
  return [...own, ...(node.Plans ?? []).flatMap((child) => unboundedScans(child, bounded))];
}

/** Statements EXPLAIN can plan: single reads and writes (not transaction control, DDL, maintenance or several statements). */
const explainable = (text: string) => /^\s*(select|with|insert|update|delete)\b/i.test(text) && !text.includes(';');

describe('plans at scale', { timeout: 120_000 }, () => {
  let database: TestDatabase;
  let client: pg.Client;
  let svc: TestService | null = null;

  beforeAll(async () => {
    database = await testDatabase();
    svc = await startCatalog({ database, env: ENV });
    await svc.close();
    svc = null;
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query(`insert into product (id, name, status) select '01PLAN' || lpad(n::text, 8, '0'), 'Plan ' || n, 'published'
                          from generate_series(1, $1::int) n`, [ROWS]);
    await client.query(`insert into product_projection (id, tenant_id, name) select id, '', name from product`);
    await client.query(`insert into svc_events (id, stream_type, stream_id, version, event_type, data)
                          select 'ev' || id, 'Product', id, 1, 'Created', '{}' from product`);
    await client.query(`insert into svc_audit (actor_kind, action, outcome, entity_type, entity_id)
                          select 'user', 'record.create', 'success', 'Product', id from product`);
    // Every consumer has applied the seed (as the live service would have).
    await client.query(`update svc_feed_cursors set (tx, seq) = (select tx, seq from svc_events order by tx desc, seq desc limit 1)`);
    await client.query(`analyze ${BIG.join(', ')}`);
    // The planner scales reltuples / relpages by the table's real size: ten million rows over these pages.
    await client.query(`update pg_class set reltuples = $1 where relname = any($2) and relnamespace = current_schema()::regnamespace`, [AT_SCALE, BIG]);
    // The next start must build the product projection (its definition changed).
    await client.query(`update svc_projection_state set definition = 'older' where name = 'product_projection'`);
  });
  afterAll(async () => {
    await svc?.close();
    await client?.end();
    await database?.drop();
  });

  it('no statement of the start, a build, a refresh, diagnostics or a projection read scans a big table whole', async () => {
    const recording = captureStatements();
    try {
      svc = await startCatalog({ database, env: ENV });
      await until(() => client.query(`select building from svc_projection_state where name = 'product_projection'`),
        (r) => r.rows[0].building === null, 30_000);
      for (const query of ['', '?verify=100', '?exactUpTo=100']) expect((await adminFetch(svc, `/storage/diagnostics${query}`)).status).toBe(200);
      expect((await fetch(`${svc.url}/public/records/Product?limit=10`)).status).toBe(200);
      expect((await fetch(`${svc.url}/public/records/Product?name=Plan%207`)).status).toBe(200);
      const id = await writer(svc.ctx).create('Product', { name: 'Refreshed' });
      await until(() => client.query('select 1 from product_projection where id = $1', [id]), (r) => r.rowCount === 1);
    } finally {
      recording.stop();
    }
    const statements = [...new Map(recording.sent.filter((s) => explainable(s.text)).map((s) => [s.text, s])).values()];
    // The statements of interest were sent (the test proves nothing if they were not).
    for (const mark of ['from svc_projection_state', 'order by "id" limit', 'pg_stats', 'svc_feed_cursors', 'with newest as', '"product_projection" p']) {
      expect(statements.some((s) => s.text.includes(mark)), mark).toBe(true);
    }
    const failures: string[] = [];
    for (const statement of statements) {
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`explain (format json) ${statement.text}`, statement.values);
      const scans = unboundedScans(rows[0]['QUERY PLAN'][0].Plan);
      if (scans.length > 0) failures.push(`${scans.join(', ')} <- ${statement.text.replace(/\s+/g, ' ').slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });
});
