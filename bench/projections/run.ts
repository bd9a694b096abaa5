/**
 * Projections benchmark, one run, local Postgres only:
 *  1. POST /projections/rebuild over 100,000 model events (50,000 records,
 *     each Created then Updated);
 *  2. GET /public/records/Product?limit=20 at concurrency 32 (autocannon),
 *     beside the floor: the same SELECT on the projection table served by a
 *     raw Node http server with pg.
 * Run: npm run bench:projections   (DATABASE admin URL: TEST_DATABASE_ADMIN_URL)
 */
import { createServer, type Server } from 'node:http';
import autocannon from 'autocannon';
import pg from 'pg';
import { TABLES_CONSUMER } from '../../runtime/projections/refresher.ts';
import { adminFetch, startCatalog } from '../../test/projections/helpers.ts';

const RECORDS = 50_000;
const DURATION_SECS = 4;
const ROUNDS = 3;
const CONNECTIONS = 32;

async function seed(db: { none(sql: string): Promise<null> }): Promise<void> {
  await db.none(`insert into product (id, name, status, price)
    select 'P' || lpad(g::text, 8, '0'), 'Product ' || g, 'published', g + 1 from generate_series(1, ${RECORDS}) g`);
  await db.none(`insert into svc_events (id, stream_type, stream_id, version, event_type, data)
    select 'C' || g, 'Product', 'P' || lpad(g::text, 8, '0'), 1, 'Created',
           jsonb_build_object('name', 'Product ' || g, 'status', 'published', 'price', g)
      from generate_series(1, ${RECORDS}) g`);
  await db.none(`insert into svc_events (id, stream_type, stream_id, version, event_type, data)
    select 'U' || g, 'Product', 'P' || lpad(g::text, 8, '0'), 2, 'Updated', jsonb_build_object('price', g + 1)
      from generate_series(1, ${RECORDS}) g`);
  await db.none('analyze');
}

function floorServer(url: string): Promise<{ server: Server; url: string; pool: pg.Pool }> {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => undefined); // an idle connection ended by the database's drop at teardown
  const sql = `select "id", "name", "status", "price", "order", "vendor_id" as "vendorId"
                 from product_projection where tenant_id = '' order by id limit $1`;
  const server = createServer(async (_req, res) => {
    const { rows } = await pool.query(sql, [20]);
    const body = JSON.stringify({ items: rows });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const address = server.address() as { port: number };
    resolve({ server, url: `http://127.0.0.1:${address.port}`, pool });
  }));
}

async function load(url: string) {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_SECS });
  return { rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99,
    errors: result.errors + result.non2xx };
}

/** Polls (an outside process's progress: the service's consumer) until the refresh cursor passed the last event. */
async function refreshCaughtUp(db: { one<T>(sql: string, values?: unknown[]): Promise<T> }): Promise<void> {
  for (;;) {
    const { done } = await db.one<{ done: boolean }>(
      `select coalesce((select (c.tx, c.seq) >= (e.tx, e.seq) from svc_feed_cursors c,
                         (select tx, seq from svc_events order by tx desc, seq desc limit 1) e where c.name = $1), false) as done`,
      [TABLES_CONSUMER]);
    if (done) return;
    await new Promise((wake) => setTimeout(wake, 50));
  }
}

async function main(): Promise<void> {
  const svc = await startCatalog({
    env: { SVC_PUBLIC_READ_MODELS: 'Product', RATE_LIMIT_RPS: '10000000', SVC_LOG_LEVEL: 'error', SVC_DB_POOL_SIZE: '10' },
  });
  try {
    await seed(svc.ctx.db);
    const started = performance.now();
    const res = await adminFetch(svc, '/projections/rebuild', { method: 'POST' });
    const rebuildMs = performance.now() - started;
    if (res.status !== 200) throw new Error(`rebuild answered ${res.status}: ${await res.text()}`);
    const rows = await svc.ctx.db.one<{ n: number }>('select count(*)::int as n from product_projection');
    await svc.ctx.db.none('analyze product_projection');
    // The live refresh consumes the seeded events too, in the background: the read rounds wait until it has
    // caught up, or its batches would fall on whichever rounds they overlap.
    await refreshCaughtUp(svc.ctx.db);

    const floor = await floorServer(svc.database.url);
    // Interleaved rounds, best of each: the machine may be shared, and load drifts during a run.
    let ours = await load(`${svc.url}/public/records/Product?limit=20`);
    let raw = await load(`${floor.url}/`);
    for (let round = 1; round < ROUNDS; round++) {
      const o = await load(`${svc.url}/public/records/Product?limit=20`);
      const r = await load(`${floor.url}/`);
      if (o.rps > ours.rps) ours = o;
      if (r.rps > raw.rps) raw = r;
    }
    floor.server.close();
    await floor.pool.end();

    console.log(`\nrebuild: ${RECORDS * 2} events -> ${rows.n} rows in ${(rebuildMs / 1000).toFixed(2)} s ` +
      `(${Math.round((RECORDS * 2) / (rebuildMs / 1000))} events/s)\n`);
    console.log(`public read, 20 rows, concurrency ${CONNECTIONS}, best of ${ROUNDS} interleaved rounds of ${DURATION_SECS} s`);
    console.log('| server                          | req/s  | p50 ms | p99 ms | errors |');
    console.log('|---------------------------------|--------|--------|--------|--------|');
    for (const [name, r] of [['svc-gen GET /public/records', ours], ['floor: raw http + pg (same SQL)', raw]] as const) {
      console.log(`| ${name.padEnd(31)} | ${String(r.rps).padStart(6)} | ${String(r.p50).padStart(6)} | ${String(r.p99).padStart(6)} | ${String(r.errors).padStart(6)} |`);
    }
    console.log(`\nratio svc-gen / floor: ${(ours.rps / raw.rps).toFixed(2)}`);
  } finally {
    await svc.close();
  }
}

await main();
