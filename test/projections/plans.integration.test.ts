/**
 * Plans at scale, on a few thousand rows: the statistics of the big tables
 * (base, projection, event log, audit) are set to ten million rows, so that
 * Postgres plans as it would on a big database. Every statement that a start
 * with a projection build, the live refresh, GET /storage/diagnostics (with
 * and without its bounds) and the projection read (public read) send is then
 * EXPLAINed; none may scan a big table whole (a sequential scan that no
 * Limit bounds). The retention sweeps (event history, svc_changes, login
 * throttle) are held to more: a Limit does not bound a scan whose filter keeps
 * nothing (the usual case: nothing is old yet), so each must read an index
 * that starts with what it filters on. A statement that loses its index fails
 * here, not in production.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import type { TestService } from '../helpers/service.ts';
import { captureStatements } from '../helpers/statements.ts';
import { pruneChanges, pruneHistory } from '../../runtime/events/history.ts';
import { pruneLoginAttempts } from '../../runtime/auth/throttle.ts';
import { adminFetch, startCatalog, testDatabase, until, writer } from './helpers.ts';

const ROWS = 3_000;
const AT_SCALE = 10_000_000;
const BIG = ['product', 'product_projection', 'svc_events', 'svc_audit', 'svc_changes', 'svc_login_throttle'];
const ENV = { SVC_PUBLIC_READ_MODELS: 'Product', SVC_PUBLIC_READ_FIELDS_Product: 'name', SVC_PROJECTION_BUILD_BATCH: '1000' };

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Index Cond'?: string;
  readonly Plans?: readonly PlanNode[];
}

const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

/** The sweeps' deletes, and the index (and the column its condition must bound) each must read. */
const SWEEPS = [
  { mark: 'from svc_events where stream_type = any', index: 'svc_events_type_occurred', column: 'occurred_at' },
  { mark: 'from svc_changes where occurred_at', index: 'svc_changes_occurred', column: 'occurred_at' },
  { mark: 'from svc_login_throttle where last_attempt_at', index: 'svc_login_throttle_last_attempt', column: 'last_attempt_at' },
];

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
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
    // The public read's filter index is built once the service listens; an index build resets the table's
    // statistics, so it must be done before the ten-million-row figures are set below.
    await until(() => client.query(`select 1 from pg_index where indexrelid = to_regclass('product_projection_name_public_idx') and indisvalid`),
      (r) => r.rowCount === 1, 30_000);
    await svc.close();
    svc = null;
    await client.query(`insert into product (id, tenant_id, name, status) select '01PLAN' || lpad(n::text, 8, '0'), '', 'Plan ' || n, 'published'
                          from generate_series(1, $1::int) n`, [ROWS]);
    await client.query(`insert into product_projection (id, tenant_id, name) select id, '', name from product`);
    // Recent rows only (and before the events: the cursors below have read them): the sweeps find nothing to delete, the case where a scan by another order reads everything.
    await client.query(`insert into svc_changes (id, stream_type, stream_id, event_type, tenant_id) select 'ch' || id, 'Product', id, 'Updated', '' from product`);
    await client.query(`insert into svc_events (id, stream_type, stream_id, version, event_type, data, tenant_id)
                          select 'ev' || id, 'Product', id, 1, 'Created', '{}', '' from product`);
    await client.query(`insert into svc_audit (id, tenant_id, actor_kind, action, outcome, entity_type, entity_id)
                          select svc_audit_next_id(), '', 'user', 'record.create', 'success', 'Product', id from product`);
    await client.query(`insert into svc_login_throttle (email, client, attempts, last_attempt_at)
                          select 'user' || n || '@example.com', '', 1, now() from generate_series(1, $1::int) n`, [ROWS]);
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

  it('no statement of the start, a build, a refresh, diagnostics, a projection read or a retention sweep scans a big table whole', async () => {
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
      // The retention sweeps (history `retained`, the changes of history `off`, idle throttle counts): nothing is old.
      expect(await pruneHistory(svc.ctx.db, { policy: 'retained', retainDays: 30, models: new Set(['Product', 'Vendor']) })).toBe(0);
      expect(await pruneChanges(svc.ctx.db)).toBe(0);
      expect(await pruneLoginAttempts(svc.ctx.db)).toBe(0);
    } finally {
      recording.stop();
    }
    const statements = [...new Map(recording.sent.filter((s) => explainable(s.text)).map((s) => [s.text, s])).values()];
    // The statements of interest were sent (the test proves nothing if they were not).
    const flat = (text: string) => text.replace(/\s+/g, ' ');
    for (const mark of ['from svc_projection_state', 'order by "tenant_id", "id" limit', 'pg_stats', 'svc_feed_cursors', 'with newest as', '"product_projection" p',
      ...SWEEPS.map((sweep) => sweep.mark)]) {
      expect(statements.some((s) => flat(s.text).includes(mark)), mark).toBe(true);
    }
    const failures: string[] = [];
    for (const statement of statements) {
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`explain (format json) ${statement.text}`, statement.values);
      const plan = rows[0]['QUERY PLAN'][0].Plan;
      const scans = unboundedScans(plan);
      if (scans.length > 0) failures.push(`${scans.join(', ')} <- ${flat(statement.text).slice(0, 200)}`);
      const sweep = SWEEPS.find((candidate) => flat(statement.text).includes(candidate.mark));
      if (sweep && !nodes(plan).some((node) => node['Index Name'] === sweep.index && (node['Index Cond'] ?? '').includes(sweep.column))) failures.push(`not bounded by ${sweep.index} (${sweep.column}) <- ${flat(statement.text).slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });
});
