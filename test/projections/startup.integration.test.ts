/**
 * Start-up in time proportional to what changed (ADR 021): a restart of an
 * unchanged service sends no statement that copies or compares a
 * projection's rows; a changed definition is built in the background while
 * the service answers (/ready 200, reads of the projection 503 UNAVAILABLE,
 * then the right rows); a build killed with SIGKILL resumes at the next start.
 *
 * The build is held at a known point by a row lock on a projection row of its
 * last batch (the batch's upsert waits for it), never by a sleep.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import type { TestDatabase } from '../helpers/db.ts';
import pino from 'pino';
import { buildFixture, startTestService, TEST_JWT_SECRET } from '../helpers/service.ts';
import { LOCK_KEYS } from '../../runtime/db/locks.ts';
import { freePort, spawnCli, waitFor } from '../helpers/cli.ts';
import { captureStatements } from '../helpers/statements.ts';
import { adminFetch, CATALOG, startCatalog, testDatabase, until } from './helpers.ts';

const ROWS = 300;
const PUBLIC = { SVC_PUBLIC_READ_MODELS: 'Product', SVC_PUBLIC_READ_FIELDS_Product: 'name' };
/** Six batches of 50: more than one batch, so the build runs in the background. */
const ENV = { ...PUBLIC, SVC_PROJECTION_BUILD_BATCH: '50' };

/** The statements sent while `work` runs (nothing else runs in this test file meanwhile). */
async function statementsDuring<T>(work: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const recording = captureStatements();
  try {
    const result = await work();
    return { result, sent: recording.sent.map((s) => s.text.replace(/\s+/g, ' ').trim()) };
  } finally {
    recording.stop();
  }
}

/** A connection of the test's own, outside the service. */
async function connect(database: TestDatabase): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return client;
}

async function seedProducts(client: pg.Client): Promise<void> {
  await client.query(`insert into product (id, tenant_id, name, status) select '01SEED' || lpad(n::text, 6, '0'), '', 'Seed ' || n, 'published'
                        from generate_series(1, $1::int) n`, [ROWS]);
}

/** Holds the projection row of the highest id (the build's last batch) locked until `release`. */
async function holdLastBatch(database: TestDatabase): Promise<{ release(): Promise<void> }> {
  const client = await connect(database);
  await client.query('begin');
  await client.query(`select 1 from product_projection where id = (select max(id) from product_projection) for update`);
  return {
    async release() {
      await client.query('rollback');
      await client.end();
    },
  };
}

interface StateRow { definition: string | null; building: string | null; build_after: string | null; build_done: string; build_started_at: Date | null }

async function productState(client: pg.Client): Promise<StateRow> {
  const { rows } = await client.query<StateRow>(`select definition, building, build_after, build_done::text, build_started_at
                                                   from svc_projection_state where name = 'product_projection'`);
  return rows[0];
}

const touchesProjectionRows = (statement: string) =>
  /(insert into|delete from|update) "?\w+_projection"?/i.test(statement) || /\bexcept\b/i.test(statement);

describe('projections at start', { timeout: 90_000 }, () => {
  let database: TestDatabase;
  let client: pg.Client;
  let svc: TestService | null = null;

  beforeAll(async () => {
    database = await testDatabase();
    client = await connect(database);
  });
  afterAll(async () => {
    await svc?.close();
    await client?.end();
    await database?.drop();
  });

  it('a restart of an unchanged service sends no statement that copies or compares projection rows', async () => {
    svc = await startCatalog({ database, env: PUBLIC }); // first start: every projection is new, and small
    await seedProducts(client);
    await svc.close();
    // Rows written behind the service's back are copied by a start that must build (SVC_PROJECTION_SYNC=always).
    svc = await startCatalog({ database, env: { ...PUBLIC, SVC_PROJECTION_SYNC: 'always' } });
    expect((await client.query('select count(*)::int as n from product_projection')).rows[0].n).toBe(ROWS);
    const before = await productState(client);
    await svc.close();
    svc = null;

    const { result, sent } = await statementsDuring(() => startCatalog({ database, env: PUBLIC }));
    svc = result;
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter(touchesProjectionRows)).toEqual([]);
    // The counter says the same: no build ran (the synchronisation time and the definition are those of the last build).
    const after = await productState(client);
    expect(after).toEqual(before);
    expect(after.building).toBeNull();
    const listed = (await (await adminFetch(svc, '/projections')).json()) as { projections: Array<{ status: string }> };
    expect(listed.projections.every((p) => p.status === 'ready')).toBe(true);
    await svc.close();
    svc = null;
  });

  it('a changed definition is built in the background: /ready answers, reads say "not ready", then the right rows', async () => {
    // The definition the rows were built with differs from this build's (as after a change of the model), and
    // the base rows changed behind the service's back: only a build brings the new names.
    await client.query(`update svc_projection_state set definition = 'older' where name = 'product_projection'`);
    await client.query(`update product set name = name || ' v2'`);
    const held = await holdLastBatch(database);
    try {
      svc = await startCatalog({ database, env: ENV });
      expect((await fetch(`${svc.url}/ready`)).status).toBe(200);
      const read = await fetch(`${svc.url}/public/records/Product?limit=5`);
      expect(read.status).toBe(503);
      expect(read.headers.get('retry-after')).toBe('5');
      expect(await read.json()).toMatchObject({
        code: 'UNAVAILABLE', error: expect.stringMatching(/^projection product_projection is not ready: it is being built/),
        projection: 'product_projection', status: 'building', build: { phase: 'rows' },
      });
      // Other projections are ready; the routes show the build and its progress.
      const listed = (await (await adminFetch(svc, '/projections')).json()) as { projections: Array<{ name: string; status: string }> };
      expect(listed.projections.find((p) => p.name === 'product_projection')).toMatchObject({ status: 'building' });
      expect(listed.projections.find((p) => p.name === 'vendor_projection')).toMatchObject({ status: 'ready' });
      const report = (await (await adminFetch(svc, '/storage/diagnostics')).json()) as { projections: { items: Array<{ name: string; status: string; build: { done: number } | null }> } };
      expect(report.projections.items.find((p) => p.name === 'product_projection')).toMatchObject({ status: 'building', build: { done: expect.any(Number) } });
    } finally {
      await held.release();
    }
    const ready = await until(() => fetch(`${svc!.url}/public/records/Product?limit=100`), (r) => r.status === 200, 20_000);
    expect(ready.status).toBe(200);
    const items = ((await ready.json()) as { items: Array<{ name: string }> }).items;
    expect(items).toHaveLength(100);
    expect(items.every((i) => i.name.endsWith(' v2'))).toBe(true);
    const missing = await client.query(`select count(*)::int as n from product b where b.deleted_at is null
      and not exists (select 1 from product_projection p where p.id = b.id and p.name = b.name)`);
    expect(missing.rows[0].n).toBe(0);
    expect(await productState(client)).toMatchObject({ building: null, build_done: String(ROWS) });
    await svc.close();
    svc = null;
  });

  it('a build killed with SIGKILL in the middle resumes from its last committed batch on the next start and completes', async () => {
    await client.query(`update svc_projection_state set definition = 'older' where name = 'product_projection'`);
    await client.query(`update product set name = replace(name, ' v2', ' v3')`);
    const held = await holdLastBatch(database);
    const port = await freePort();
    const dir = await buildFixture(CATALOG);
    const child = spawnCli(['start', dir], {
      env: { DATABASE_URL: database.url, PORT: String(port), JWT_SECRET: TEST_JWT_SECRET, SVC_PROJECTION_BUILD_BATCH: '50' },
    });
    let interrupted: StateRow;
    try {
      await waitFor(`http://127.0.0.1:${port}/ready`, 80_000).catch((error: Error) => {
        throw new Error(`${error.message}\n--- server output ---\n${child.output()}`);
      });
      // At least one batch committed (the last one cannot: it waits for the held row). How many more commit
      // before the kill lands depends on the load; what is guaranteed is checked below.
      interrupted = await until(() => productState(client), (s) => s.building !== null && Number(s.build_done) >= 50, 60_000);
      expect(Number(interrupted.build_done)).toBeGreaterThanOrEqual(50);
      child.child.kill('SIGKILL');
      await child.exited();
    } finally {
      if (child.child.exitCode === null) child.child.kill('SIGKILL');
      await held.release();
    }
    // The batch in flight rolled back: the state is still the build, at a batch boundary at or after the one
    // seen, its count that of the base rows up to its position (no batch counted twice, none partly).
    const stopped = await productState(client);
    expect(stopped.building).not.toBeNull();
    // The position is the last key built, (tenant_id, id): every row here is of the global scope ('').
    const keyOf = (state: StateRow) => JSON.parse(state.build_after!) as [string, string];
    expect(keyOf(stopped)[0]).toBe('');
    expect(keyOf(stopped)[1] >= keyOf(interrupted!)[1]).toBe(true);
    expect(keyOf(stopped)[1] < '01SEED000300').toBe(true);
    const walked = await client.query(`select count(*)::int as n from product where (tenant_id, id) <= ($1, $2)`, keyOf(stopped));
    expect(Number(stopped.build_done)).toBe(walked.rows[0].n);

    svc = await startCatalog({ database, env: ENV });
    const done = await until(() => productState(client), (s) => s.building === null, 60_000);
    // Resumed, not restarted: the build keeps its start time, and every base row was walked exactly once.
    expect(done.building).toBeNull();
    expect(done.build_started_at).toEqual(interrupted!.build_started_at);
    expect(done.build_done).toBe(String(ROWS));
    // No row lost, none left stale, none extra.
    const stale = await client.query(`select count(*)::int as n from product b where b.deleted_at is null
      and not exists (select 1 from product_projection p where p.id = b.id and p.name = b.name)`);
    expect(stale.rows[0].n).toBe(0);
    const extra = await client.query(`select count(*)::int as n from product_projection p
      where not exists (select 1 from product b where b.id = p.id and b.deleted_at is null)`);
    expect(extra.rows[0].n).toBe(0);
    const listed = (await (await adminFetch(svc, '/projections')).json()) as { projections: Array<{ name: string; status: string }> };
    expect(listed.projections.find((p) => p.name === 'product_projection')).toMatchObject({ status: 'ready' });
  });

  it('an existing projection table without its indexes (tenant, public filter) gets them in the background, built concurrently', async () => {
    await svc?.close();
    svc = null;
    // The killed server's backend may still be finishing a statement: wait until no other session works on this database.
    await until(() => client.query(`select count(*)::int as n from pg_stat_activity where datname = current_database()
                                      and pid <> pg_backend_pid() and state <> 'idle'`), (r) => r.rows[0].n === 0, 20_000);
    // A table of layout 3 is keyed by (tenant_id, id): its key is the tenant index, none is built beside it.
    const indexes = async () => (await client.query(`select indexname as name, indexdef as def from pg_indexes
                                                      where tablename = 'product_projection' order by 1`)).rows;
    expect((await indexes()).filter((i) => /\(tenant_id, id\)$/.test(i.def)).map((i) => i.name)).toEqual(['product_projection_pkey']);
    // A table of layout 2 (keyed by id) gets the tenant index, and the ones below exercise its build.
    await client.query('alter table product_projection drop constraint product_projection_pkey');
    await client.query('alter table product_projection add constraint product_projection_pkey primary key (id)');
    await client.query('drop index if exists product_projection_tenant_idx');
    await client.query('drop index if exists product_projection_name_public_idx');
    const { result, sent } = await statementsDuring(() => startCatalog({ database, env: PUBLIC }));
    svc = result;
    // The start itself built no index on the table (a plain build would stop its writes): only the background one, concurrently.
    expect(sent.filter((s) => /create index/i.test(s) && /product_projection/.test(s) && !/concurrently/i.test(s))).toEqual([]);
    const names = ['product_projection_tenant_idx', 'product_projection_name_public_idx'];
    const valid = () => client.query(`select c.relname as name, i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
                                        where c.relname = any($1) order by c.relname`, [names]);
    const built = await until(valid, (r) => r.rows.length === 2 && r.rows.every((row) => row.valid === true), 60_000);
    expect(built.rows).toEqual([{ name: 'product_projection_name_public_idx', valid: true }, { name: 'product_projection_tenant_idx', valid: true }]);
    // The public read of the global scope walks the tenant index: as many rows as it returns.
    const { rows } = await client.query(`explain (format json) select id from product_projection p where p.tenant_id = '' order by p.id limit 5`);
    expect(JSON.stringify(rows[0]['QUERY PLAN'])).toContain('product_projection_tenant_idx');
  });

  it('another instance starting while one builds a projection index starts at once and leaves the build to it', async () => {
    await svc?.close();
    svc = null;
    await client.query('drop index if exists product_projection_tenant_idx');
    // A transaction older than the build holds it in its last wait (for older snapshots), the index INVALID.
    const older = await connect(database);
    await older.query('begin isolation level repeatable read');
    await older.query('select 1 from svc_projection_state limit 1');
    let second: TestService | null = null;
    try {
      svc = await startCatalog({ database, env: PUBLIC });
      const waiting = await until(() => client.query(`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and query ilike 'create index concurrently%product_projection_tenant_idx%' and wait_event_type = 'Lock'`),
      (r) => r.rows[0].n === 1, 60_000);
      expect(waiting.rows[0].n).toBe(1);
      // The second instance's start takes no lock the build holds or waits for: it completes while the build waits.
      second = await startCatalog({ database, env: PUBLIC });
      expect((await fetch(`${second.url}/ready`)).status).toBe(200);
      expect((await fetch(`${second.url}/public/records/Product?limit=5`)).status).toBe(200);
      const building = await client.query(`select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
                                             where c.relname = 'product_projection_tenant_idx'`);
      expect(building.rows).toEqual([{ valid: false }]);
    } finally {
      await older.query('rollback');
      await older.end();
    }
    try {
      // The first instance's build completes (a deadlock would have cancelled it and left the index INVALID).
      const index = await until(() => client.query(`select i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
                                                    where c.relname = 'product_projection_tenant_idx'`), (r) => r.rows[0]?.valid === true, 60_000);
      expect(index.rows).toEqual([{ valid: true }]);
    } finally {
      await second?.close();
    }
  });

  it('a start that must add a column while another instance builds an index waits for it outside any transaction', async () => {
    await svc?.close();
    svc = null;
    await client.query('alter table product_projection drop column name');
    // Another instance's index build in progress: its session holds the build lock.
    const builder = await connect(database);
    await builder.query('select pg_advisory_lock($1)', [LOCK_KEYS.projectionIndexes]);
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
    const column = () => client.query(`select 1 from information_schema.columns where table_name = 'product_projection' and column_name = 'name'`);
    let starting: Promise<TestService> | null = null;
    try {
      starting = startTestService({ fixture: CATALOG, database, env: PUBLIC, log });
      const waited = await until(async () => lines.some((line) => line.includes('waiting for that build')), (seen) => seen, 60_000);
      expect(waited).toBe(true);
      // It altered nothing: its transaction ended before it began to wait.
      expect((await column()).rowCount).toBe(0);
    } finally {
      await builder.query('select pg_advisory_unlock($1)', [LOCK_KEYS.projectionIndexes]);
      await builder.end();
      if (starting) svc = await starting;
    }
    expect((await column()).rowCount).toBe(1);
    // The added column is filled by the build its reshaping asks for.
    const ready = await until(() => fetch(`${svc!.url}/public/records/Product?limit=5`), (r) => r.status === 200, 60_000);
    expect(((await ready.json()) as { items: Array<{ name: string }> }).items.every((item) => item.name.startsWith('Seed '))).toBe(true);
  });
});
