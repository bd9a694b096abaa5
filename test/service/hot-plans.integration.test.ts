/**
 * The hot statements of ADR 022 keep their indexes: each real statement (sent
 * by its real route, captured on the wire with its values) is EXPLAINed on a
 * some thousands of rows spread as at scale (one tenant among hundreds, a log
 * spread over a year, a jobs table of mostly finished jobs), after ANALYZE,
 * and must reach its table through the index named, never by a sequential scan.
 * A statement that loses its index (a changed predicate, a dropped index)
 * fails here rather than at 10M rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldAuditRollups, pruneAudit } from '../../runtime/audit/index.ts';
import { foldCounts } from '../../runtime/jobs/counts.ts';
import { pruneBatch } from '../../runtime/jobs/retention.ts';
import { TenantScope } from '../../runtime/tenancy/index.ts';
import { listRuns } from '../../runtime/workflows/store.ts';
import type { TestService } from '../helpers/service.ts';
import { startRecordsService } from '../records/helpers.ts';
import { captureMatching as capture, type SentStatement as Captured } from '../helpers/statements.ts';

/** One of 200 tenants holding 0.5% of each table, as one of 1,000 does at scale within 5x. */
const TENANT = 't7';
/** A tenant holding a third of the records: a sequential scan looks cheap for it, and is not (ADR 022). */
const BIG = 'big';
const EXACT_COUNT = 1_000;

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Index Name'?: string;
  readonly 'Relation Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

function* nodes(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}

let service: TestService;
let tokens: Record<'Manager' | 'Admin' | 'BigManager', string>;

async function planOf(statement: Captured): Promise<PlanNode> {
  const [row] = await service.ctx.db.any<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`explain (format json) ${statement.text}`, statement.values);
  return row['QUERY PLAN'][0].Plan;
}

/** The one statement matching `pattern` that GET `path` sends. */
async function statementOf(path: string, pattern: RegExp, role: 'Manager' | 'Admin' = 'Manager'): Promise<Captured> {
  const captured = await capture(pattern, async () => {
    const response = await fetch(service.url + path, { headers: { authorization: `Bearer ${tokens[role]}` } });
    expect(response.status, path).toBe(200);
    await response.text();
  });
  expect(captured, `${path}: ${pattern}`).toHaveLength(1);
  return captured[0];
}

/** Every scan of `relation` in the plan is through `index` (a scan by another index, or a sequential one, fails). */
function expectIndex(plan: PlanNode, relation: string, index: string | RegExp) {
  const scans = [...nodes(plan)].filter((node) => node['Relation Name'] === relation || node['Index Name']?.startsWith(relation));
  const names = scans.map((node) => `${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''}`);
  expect(scans.length, JSON.stringify(plan)).toBeGreaterThan(0);
  expect(scans.filter((node) => node['Node Type'] === 'Seq Scan'), names.join(', ')).toEqual([]);
  expect(scans.some((node) => node['Index Name'] !== undefined && (typeof index === 'string' ? node['Index Name'] === index : index.test(node['Index Name']))),
    names.join(', ')).toBe(true);
}

beforeAll(async () => {
  // The exact-count bound below the big tenant's rows, as 10,000 is below a big tenant's at scale.
  service = await startRecordsService({ env: { SVC_GRAPHQL_EXACT_COUNT_LIMIT: String(EXACT_COUNT) } });
  tokens = {
    Manager: await service.token({ role: 'Manager', tenantId: TENANT, userId: 'plan-manager' }),
    Admin: await service.token({ role: 'Admin', tenantId: TENANT, userId: 'plan-admin' }),
    BigManager: await service.token({ role: 'Manager', tenantId: BIG, userId: 'plan-big' }),
  };
  const { db } = service.ctx;
  // Records: 6,000 of 200 tenants, then 3,000 of one big tenant (a third of the table, its rows last).
  await db.none(`insert into company (id, tenant_id, name, employees)
    select 'c' || lpad(i::text, 7, '0'), case when i > 6000 then '${BIG}' else 't' || i % 200 end, 'Company ' || i, i % 10
      from generate_series(1, 9000) i`);
  // Audit: 20,000 entries of 200 tenants over 333 days: the tenant's 100 (k = i / 200 numbers them) one every 3.3 days.
  await db.none(`insert into svc_audit (id, occurred_at, tenant_id, actor_kind, actor_id, actor_role, action, entity_type, entity_id, outcome)
    select svc_audit_next_id(), now() - (20000 - i) * interval '24 minutes', 't' || i % 200, 'user', 'actor-' || k % 20, 'Manager',
           (array['record.create', 'record.update', 'record.delete', 'auth.login', 'job.enqueue', 'media.upload',
                  'user.update', 'record.restore', 'auth.logout', 'workflow.run'])[1 + k % 10],
           case when k % 50 = 0 then 'Projection' else (array['Company', 'Contact', 'User', 'Job', 'Media'])[1 + (k / 10) % 5] end,
           'e' || k % 30, case when k % 25 = 0 then 'denied' else 'success' end
      from generate_series(1, 20000) i, lateral (select i / 200 as k) n`);
  // Jobs: 20,000 of 200 tenants and 5 queues, finished over the last 25 hours; 5% queued, 5% dead.
  await db.none(`insert into svc_jobs (id, queue, kind, status, tenant_id, created_at, updated_at)
    select 'j' || lpad(i::text, 7, '0'), 'q' || k % 5, 'k',
           case when k % 20 = 0 then 'queued' when k % 20 = 10 then 'dead' else 'succeeded' end, 't' || i % 200,
           now() - (20000 - i) * interval '4.5 seconds', now() - (20000 - i) * interval '4.5 seconds'
      from generate_series(1, 20000) i, lateral (select i / 200 as k) n`);
  // Media: 20,000 uploads of 200 tenants, each with its own bytes.
  await db.none(`insert into svc_media_blobs (tenant_id, sha256, size, storage_key, refcount)
    select 't' || i % 200, md5(i::text) || md5((i + 1)::text), 10, 'k' || i, 1 from generate_series(1, 20000) i`);
  await db.none(`insert into svc_media (id, tenant_id, owner_kind, owner_id, filename, content_type, size, sha256, status)
    select 'm' || lpad(i::text, 7, '0'), 't' || i % 200, 'user', 'u', 'f.txt', 'text/plain', 10, md5(i::text) || md5((i + 1)::text), 'committed'
      from generate_series(1, 20000) i`);
  // Workflow runs: 20,000 of 200 tenants and 2 workflows, 5% failed.
  await db.none(`insert into svc_workflow_runs (id, workflow, definition, status, tenant_id, trigger)
    select 'r' || lpad(i::text, 7, '0'), 'w' || i % 2, '{}', case when (i / 200) % 20 = 5 then 'failed' else 'succeeded' end,
           't' || i % 200, '{"kind": "manual"}' from generate_series(1, 20000) i`);
  await foldCounts(db);
  // The audit rollups hold every entry (a statistics read still plans its part after the watermark);
  // settleMs 0: the entries were made a moment ago, and nothing else writes here yet.
  await foldAuditRollups(db, { batch: 5_000, settleMs: 0 });
  await db.none('analyze svc_audit_daily; analyze svc_audit_daily_actors; analyze company; analyze svc_audit; analyze svc_jobs; analyze svc_job_counts; analyze svc_job_count_deltas; analyze svc_media; analyze svc_media_blobs; analyze svc_workflow_runs');
}, 120_000);
afterAll(() => service?.close());

describe('hot statements reach their rows through an index', { timeout: 60_000 }, () => {
  it('paginatedRecords { totalCount }: the bounded count reads the tenant\'s rows only', async () => {
    const captured = await capture(/count\(\*\)::int as n from \(select 1 from/, async () => {
      const response = await fetch(`${service.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.Manager}` },
        body: JSON.stringify({ query: '{ paginatedRecords(model: "Company") { totalCount totalCountIsEstimate } }' }),
      });
      expect(((await response.json()) as any).data.paginatedRecords).toEqual({ totalCount: 30, totalCountIsEstimate: false });
    });
    expect(captured).toHaveLength(1);
    expectIndex(await planOf(captured[0]), 'company', /^company_/);
  });

  it('paginatedRecords { totalCount }: a tenant with a third of the table stops at the bound in the key order, not in a sequential scan', async () => {
    const captured = await capture(/count\(\*\)::int as n from \(select 1 from/, async () => {
      const response = await fetch(`${service.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens.BigManager}` },
        body: JSON.stringify({ query: '{ paginatedRecords(model: "Company") { totalCount totalCountIsEstimate } }' }),
      });
      expect(((await response.json()) as any).data.paginatedRecords).toMatchObject({ totalCountIsEstimate: true });
    });
    expect(captured).toHaveLength(1);
    expectIndex(await planOf(captured[0]), 'company', /^company_/);
  });

  it.each([
    ['', 'svc_audit_pkey'],
    ['?entityType=Contact&entityId=e11', 'svc_audit_entity_id'],
    ['?entityId=e11', 'svc_audit_entity_id'],
    ['?actorId=actor-3', 'svc_audit_actor'],
    ['?outcome=denied', 'svc_audit_unsuccessful'],
    ['?action=auth.login', 'svc_audit_action'],
    ['?action=never.written', 'svc_audit_action'],
    ['?entityType=Projection', 'svc_audit_entity_type'],
    [`?from=${new Date(Date.now() - 30 * 86_400_000).toISOString()}`, 'svc_audit_tenant_time'],
  ])('/audit/logs%s through %s', async (query, index) => {
    const statement = await statementOf(`/audit/logs${query}`, /from svc_audit a where/);
    expectIndex(await planOf(statement), 'svc_audit', index);
  });

  it('/audit/statistics reads the tenant\'s rollups of whole days, and from the log its partial days and entries after the watermark only', async () => {
    const statement = await statementOf('/audit/statistics', /from svc_audit_daily r where/);
    const plan = await planOf(statement);
    // The range's partial first day through the time index, the entries after the watermark through an id index; nothing else of the log.
    expectIndex(plan, 'svc_audit', 'svc_audit_tenant_time');
    const logScans = [...nodes(plan)].filter((node) => node['Relation Name'] === 'svc_audit' || node['Index Name']?.startsWith('svc_audit_'))
      .filter((node) => !node['Index Name']?.startsWith('svc_audit_daily'));
    expect(logScans.map((node) => node['Index Name'])).toEqual([
      'svc_audit_tenant_time', expect.stringMatching(/^svc_audit_(tenant_id|pkey|id)$/),
    ]);
    expectIndex(plan, 'svc_audit_daily', 'svc_audit_daily_pkey');
    expectIndex(plan, 'svc_audit_daily_actors', 'svc_audit_daily_actors_pkey');
  });

  it('the rollups\' fold reads the entries after its watermark by id; the retention sweep finds the tenants with emptied days\' rollups by (day, tenant)', async () => {
    const { db } = service.ctx;
    // A new entry, then a fold (the service's own periodic fold may take it first: then again).
    let fold: Captured | undefined;
    for (let attempt = 0; attempt < 20 && !fold; attempt++) {
      [fold] = await capture(/insert into svc_audit_daily as r/, async () => {
        await db.none(`insert into svc_audit (id, tenant_id, actor_kind, action, outcome) values (svc_audit_next_id(), $1, 'system', 'record.create', 'success')`, [TENANT]);
        await foldAuditRollups(db, { settleMs: 0 }); // the entry is a moment old: no settling wait
      });
    }
    expect(fold).toBeDefined();
    const foldPlan = await planOf(fold!);
    expectIndex(foldPlan, 'svc_audit', 'svc_audit_id');
    // A retention horizon that empties nothing of the log (one day before the oldest entry), so only the rollups' prune is planned.
    // The walk over the tenants with rollups before the horizon (each tenant's delete: test/audit/rollup-prune.integration.test.ts).
    const walks = await capture(/from svc_audit_daily_actors r\s+where r\.day </, () => pruneAudit(db, 400));
    expect(walks.length).toBeGreaterThan(0);
    const walkPlan = await planOf(walks[0]);
    expectIndex(walkPlan, 'svc_audit_daily', 'svc_audit_daily_day_tenant');
    expectIndex(walkPlan, 'svc_audit_daily_actors', 'svc_audit_daily_actors_day_tenant');
  });

  it('/jobs/stats reads the tenant\'s counters through their key, and its oldest queued job first', async () => {
    const statement = await statementOf('/jobs/stats', /as by_queue/, 'Admin');
    const plan = await planOf(statement);
    expectIndex(plan, 'svc_job_counts', 'svc_job_counts_key');
    expectIndex(plan, 'svc_jobs', 'svc_jobs_queued_since');
  });

  it.each([
    ['', 'svc_jobs_tenant_recent'],
    ['?status=dead', 'svc_jobs_tenant_status'],
  ])('/jobs/recent%s through %s', async (query, index) => {
    const statement = await statementOf(`/jobs/recent${query}`, /as updated_at from svc_jobs/, 'Admin');
    expectIndex(await planOf(statement), 'svc_jobs', index);
  });

  it('a media record finds its bytes by content hash, not by reading every blob', async () => {
    const statement = await statementOf('/media/m0000207/metadata', /left join svc_media_blobs b[\s\S]*where m\.id = /);
    const plan = await planOf(statement);
    expectIndex(plan, 'svc_media', 'svc_media_pkey');
    expectIndex(plan, 'svc_media_blobs', 'svc_media_blobs_pkey');
  });

  it('GET /workflows/runs?status= reads the scope\'s runs of that status only', async () => {
    const captured = await capture(/from svc_workflow_runs where[\s\S]*order by id desc/, () =>
      listRuns(service.ctx.db, TenantScope.of(TENANT), { workflows: ['w0', 'w1'], status: 'failed', limit: 20, before: null }));
    expect(captured).toHaveLength(1);
    expectIndex(await planOf(captured[0]), 'svc_workflow_runs', 'svc_workflow_runs_status');
  });

  it('the retention batch reads only finished jobs of its status, oldest first', async () => {
    expectIndex(await planOf(pruneBatch('succeeded', 24 * 3600, 1000)), 'svc_jobs', 'svc_jobs_finished');
    expectIndex(await planOf(pruneBatch('dead', 30 * 86_400, 1000)), 'svc_jobs', 'svc_jobs_finished');
  });
});
