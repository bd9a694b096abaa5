/**
 * A tenant-bound worker's lease beside another tenant's large backlog: it gets
 * its own tenant's jobs, and the lease statement reaches them through
 * svc_jobs_ready_tenant instead of walking the other tenant's queued jobs
 * (EXPLAIN ANALYZE of the worker plane's real statement, rolled back).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../runtime/ids.ts';
import { workerStatementTexts } from '../../runtime/jobs/plane.ts';
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
    const texts = workerStatementTexts(service.ctx.services.events)!;
    const tokenHash = createHash('sha256').update(minted.token).digest('hex');
    const plan = await service.ctx.db.tx(async (t) => {
      const [row] = await t.any<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `explain (analyze, format json) ${texts.lease.text}`,
        texts.lease.values({ who: tokenHash, queues: ['mail'], capacity: 10, visibilitySecs: 30, eventIds: Array.from({ length: 10 }, () => newId()) }),
      );
      await t.none('rollback; begin'); // nothing leased: pg-promise's own COMMIT then ends an empty transaction
      return row['QUERY PLAN'][0].Plan;
    });
    const scans = [...nodes(plan)].filter((node) => node['Relation Name'] === 'svc_jobs');
    expect(scans.some((node) => node['Index Name'] === 'svc_jobs_ready_tenant' && node['Actual Rows'] === 2)).toBe(true);
    // No scan of svc_jobs touched the backlog (tenant_id = 'big' rows rejected one by one).
    for (const scan of scans) expect(scan['Rows Removed by Filter'] ?? 0).toBeLessThan(100);

    // And over HTTP, the same worker gets exactly its two jobs.
    const leased = await workerClient(service, minted.token)('/jobs/lease', { queues: ['mail'], capacity: 10, visibilitySecs: 30 });
    expect(leased.status).toBe(200);
    expect(leased.body.jobs.map((job: { id: string }) => job.id).sort()).toEqual(['1small1', '1small2']);
  });
});
