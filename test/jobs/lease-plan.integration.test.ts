/**
 * A tenant-bound worker's lease beside another tenant's large backlog: it gets
 * its own tenant's jobs, and the lease statement reaches them through
 * svc_jobs_ready_tenant instead of walking the other tenant's queued jobs
 * (EXPLAIN ANALYZE of the worker plane's real statement, rolled back).
 *
 * And the plans under statistics that call svc_jobs empty (a queue drained,
 * vacuumed, then filled in one burst): the pick walks the ready index and stops
 * at the limit (its plan read with auto_explain, the pick being a function),
 * and the plane repairs the statistics, after which the batched complete probes
 * the primary key once a job instead of joining every leased job.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../runtime/ids.ts';
import { jobStatistics, workerStatementTexts } from '../../runtime/jobs/plane.ts';
import type { TestService } from '../helpers/service.ts';
import { createJobsDatabase, mintWorker, startJobsService, workerClient } from './helpers.ts';
import type { TestDatabase } from '../helpers/db.ts';

const BACKLOG = 20_000;

let database: TestDatabase;
let service: TestService;

beforeAll(async () => {
  database = await createJobsDatabase();
  service = await startJobsService({ database });
  // The big tenant's jobs sort first (higher priority): a scan in svc_jobs_ready order meets all of them before the small tenant's.
  await service.ctx.db.none(
    `insert into svc_jobs (id, queue, kind, tenant_id, priority)
     select '0big' || lpad(n::text, 8, '0'), 'mail', 'send', 'big', 5 from generate_series(1, $1::int) n`, [BACKLOG]);
  await service.ctx.db.none(
    `insert into svc_jobs (id, queue, kind, tenant_id, priority) values ('1small1', 'mail', 'send', 'small', 0), ('1small2', 'mail', 'send', 'small', 0)`);
  await service.ctx.db.none('analyze svc_jobs');
});
afterAll(async () => {
  await service?.stop();
  await database?.drop();
});

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Relation Name'?: string;
  readonly 'Actual Rows'?: number;
  readonly 'Actual Loops'?: number;
  readonly 'Rows Removed by Filter'?: number;
  readonly Plans?: readonly PlanNode[];
}

function* nodes(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}

describe('a tenant-bound lease beside a large backlog', { timeout: 60_000 }, () => {
  it('leases its own tenant\'s jobs through the tenant index, without walking the backlog', async () => {
    const minted = await mintWorker(service, ['mail'], 'small');
    // The pick (svc_jobs_pick, a function) walks the tenant's ready index: its plan, read by auto_explain.
    const { plans: [plan], leased: n } = await pickPlans(database, service, minted.token, 'mail', 10);
    expect(n).toBe(2);
    expect(plan).toMatch(/Index Scan using svc_jobs_ready_tenant on svc_jobs j .*actual rows=2 loops=1/);
    // It touched none of the backlog (tenant_id = 'big' rows rejected one by one).
    expect(plan).not.toMatch(/Rows Removed by Filter/);

    // And over HTTP, the same worker gets exactly its two jobs.
    const leased = await workerClient(service, minted.token)('/jobs/lease', { queues: ['mail'], capacity: 10, visibilitySecs: 30 });
    expect(leased.status).toBe(200);
    expect(leased.body.jobs.map((job: { id: string }) => job.id).sort()).toEqual(['1small1', '1small2']);
  });
});

/** The plans of the statements the lease statement runs inside the pick (auto_explain, sent as notices); the lease is rolled back. */
async function pickPlans(database: TestDatabase, service: TestService, token: string, queue: string, capacity: number): Promise<{ plans: string[]; leased: number }> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const notices: string[] = [];
  let leased = 0;
  client.on('notice', (notice) => notices.push(notice.message ?? ''));
  try {
    await client.query(`load 'auto_explain'`);
    for (const setting of ['log_min_duration = 0', 'log_nested_statements = on', 'log_analyze = on', 'log_timing = off', `log_level = 'notice'`]) {
      await client.query(`set auto_explain.${setting}`);
    }
    const texts = workerStatementTexts(service.ctx.services.events);
    await client.query('begin');
    const { rows } = await client.query(texts.lease.text, texts.lease.values({
      who: sha256(token), queues: [queue], capacity, visibilitySecs: 30, eventIds: Array.from({ length: capacity }, () => newId()),
    }));
    leased = rows.filter((row) => row.id !== null).length;
    await client.query('rollback');
  } finally {
    await client.end();
  }
  return { plans: notices.filter((notice) => notice.includes('from svc_jobs j')), leased };
}

const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');
const QUEUED = 13_000;
const LEASED = 5_000;

describe('plans under statistics that call svc_jobs empty', { timeout: 120_000 }, () => {
  let emptied: TestDatabase;
  let burst: TestService;

  beforeAll(async () => {
    emptied = await createJobsDatabase();
    burst = await startJobsService({ database: emptied });
    const db = burst.ctx.db;
    // A queue drained (its jobs queued, leased, succeeded, deleted), then vacuumed and analyzed. The
    // pages stay allocated (in the bench, the idle workers' polls keep the vacuum from truncating them).
    await db.none(`alter table svc_jobs set (vacuum_truncate = off)`);
    await db.none(`insert into svc_jobs (id, queue, kind) select 'old' || lpad(n::text, 10, '0'), 'burst', 'noop' from generate_series(1, 20000) n`);
    await db.none(`update svc_jobs set status = 'leased', lease_id = 'old', visible_at = now() + interval '1 hour'`);
    await db.none(`update svc_jobs set status = 'succeeded', lease_id = null`);
    await db.none(`delete from svc_jobs`);
    await db.none(`vacuum analyze svc_jobs`);
    // Then one burst: queued jobs of no tenant and of one tenant, and other workers' leases.
    await db.none(`insert into svc_jobs (id, queue, kind, payload) select 'q' || lpad(n::text, 10, '0'), 'burst', 'noop', jsonb_build_object('n', n) from generate_series(1, $1::int) n`, [QUEUED]);
    await db.none(`insert into svc_jobs (id, queue, kind, tenant_id) select 't' || lpad(n::text, 10, '0'), 'burst', 'noop', 'acme' from generate_series(1, 1000) n`);
    await db.none(`insert into svc_jobs (id, queue, kind, status, lease_id, worker_id, visible_at)
      select 'l' || lpad(n::text, 10, '0'), 'burst', 'noop', 'leased', 'other', 'other', now() + interval '1 hour' from generate_series(1, $1::int) n`, [LEASED]);
  });
  afterAll(async () => {
    await burst?.stop();
    await emptied?.drop();
  });

  const reltuples = async () => (await burst.ctx.db.one<{ n: number }>(`select reltuples::float8 as n from pg_class where oid = 'svc_jobs'::regclass`)).n;

  it('the statistics call the table empty', async () => {
    expect(await reltuples()).toBe(0);
    const { relpages } = await burst.ctx.db.one<{ relpages: number }>(`select relpages from pg_class where oid = 'svc_jobs'::regclass`);
    expect(relpages).toBeGreaterThan(100);
  });

  it('the pick walks the ready index and stops at the limit, sorting nothing', async () => {
    const anyTenant = await mintWorker(burst, ['burst']);
    const { plans: [plan], leased } = await pickPlans(emptied, burst, anyTenant.token, 'burst', 10);
    expect(leased).toBe(10);
    expect(plan).toMatch(/Index Scan using svc_jobs_ready on svc_jobs j .*actual rows=10 loops=1/);
    expect(plan).not.toMatch(/Sort/);

    const tenantBound = await mintWorker(burst, ['burst'], 'acme');
    const { plans: [tenantPlan], leased: tenantLeased } = await pickPlans(emptied, burst, tenantBound.token, 'burst', 10);
    expect(tenantLeased).toBe(10);
    expect(tenantPlan).toMatch(/Index Scan using svc_jobs_ready_tenant on svc_jobs j .*actual rows=10 loops=1/);
    expect(tenantPlan).not.toMatch(/Sort/);
  });

  /** EXPLAIN ANALYZE of the batched complete of `jobs` (rolled back). */
  async function completePlan(token: string, jobs: ReadonlyArray<{ id: string; leaseId: string }>): Promise<PlanNode> {
    const texts = workerStatementTexts(burst.ctx.services.events);
    return burst.ctx.db.tx(async (t) => {
      const [row] = await t.any<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`explain (analyze, format json) ${texts.complete.text}`, texts.complete.values({
        who: sha256(token), ids: jobs.map((job) => job.id), leaseIds: jobs.map((job) => job.leaseId),
        results: jobs.map(() => null), eventIds: jobs.map(() => newId()),
      }));
      await t.none('rollback; begin');
      return row['QUERY PLAN'][0].Plan;
    });
  }

  /**
   * The complete reads the batch once, and svc_jobs either by one primary-key probe a job or in one pass over
   * the leased jobs alone: never a nested loop that reads the batch again for each leased job (or every leased
   * job again for each item), nor a pass over every job of the table.
   */
  function expectNoRescan(plan: PlanNode, leasedJobs: number): void {
    const all = [...nodes(plan)];
    for (const node of all.filter((n) => n['Node Type'] === 'Function Scan')) expect(node['Actual Loops']).toBe(1);
    for (const scan of all.filter((n) => n['Relation Name'] === 'svc_jobs' && n['Node Type'] !== 'ModifyTable')) {
      if (scan['Index Name'] === 'svc_jobs_pkey' && scan['Actual Loops'] !== 1) {
        expect(scan['Actual Rows']).toBeLessThanOrEqual(1);
      } else {
        expect(scan['Actual Loops']).toBe(1);
        expect((scan['Actual Rows'] ?? 0) + (scan['Rows Removed by Filter'] ?? 0)).toBeLessThanOrEqual(leasedJobs);
      }
    }
  }

  it('a lease larger than the statistics allow has svc_jobs analyzed; the batched complete then reads only leased jobs', async () => {
    expect(await reltuples()).toBe(0);
    const minted = await mintWorker(burst, ['burst']);
    const leased = await workerClient(burst, minted.token)('/jobs/lease', { queues: ['burst'], capacity: 100, visibilitySecs: 300 });
    expect(leased.status).toBe(200);
    const jobs = leased.body.jobs as Array<{ id: string; leaseId: string }>;
    expect(jobs).toHaveLength(100);
    await jobStatistics(burst.ctx.db).settled();
    expect(await reltuples()).toBeGreaterThan(QUEUED);
    // Planned under statistics that call the table empty, the same complete was one pass over all
    // 19,100 jobs of svc_jobs by its primary key (a hash join), per batch.
    expectNoRescan(await completePlan(minted.token, jobs), LEASED + jobs.length);
  });
});
