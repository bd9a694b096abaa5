/**
 * The retention sweep prunes the audit rollups tenant by tenant (ADR 025: a
 * tenant's rollups are one shard's on Citus): every rollup row of a day
 * wholly before the retention horizon goes, for every tenant and the global
 * scope, every other row stays as it was; the tenants come from a walk of the
 * (day, tenant) pairs below the horizon through an index, and each tenant's
 * delete reaches its rows through the tables' keys. Run under
 * SVC_DISTRIBUTED_CHECK=1 (the suite's default), a prune statement not pinned
 * to one tenant, and not waived, fails the sweep.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldAuditRollups, pruneAudit } from '../../runtime/audit/index.ts';
import type { TestService } from '../helpers/service.ts';
import { startAuditService } from './helpers.ts';
import { captureMatching as capture, type SentStatement as Captured } from '../helpers/statements.ts';

const DAY = 86_400_000;
const TENANTS = ['prune-a', 'prune-b', 'prune-c', 'prune-d', ''] as const;

let service: TestService;

beforeAll(async () => {
  service = await startAuditService();
}, 60_000);
afterAll(() => service?.close());

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

/** The scans of `relation` in the plan of `statement` (a bitmap's index scan too): "<node type> <index>". */
async function scansOf(statement: Captured, relation: string): Promise<string[]> {
  const [row] = await service.ctx.db.any(`explain (format json) ${statement.text}`, statement.values);
  const plan = row['QUERY PLAN'][0].Plan as PlanNode;
  return [...nodes(plan)]
    .filter((n) => (n['Relation Name'] === relation && n['Node Type'].endsWith('Scan')) || [`${relation}_pkey`, `${relation}_day_tenant`].includes(n['Index Name'] ?? ''))
    .map((n) => `${n['Node Type']}${n['Index Name'] ? ` ${n['Index Name']}` : ''}`);
}

/** Every rollup row of both tables, as comparable text, with its day. */
async function rollups(): Promise<Array<{ day: string; row: string }>> {
  return service.ctx.db.any(`
    select day::text as day, 'daily ' || tenant_id || ' ' || day || ' ' || action || ' ' || outcome || ' ' || entity_type || ' ' || entries as row
      from svc_audit_daily
    union all
    select day::text, 'actor ' || tenant_id || ' ' || day || ' ' || actor_id || ' ' || entries || ' ' || last_at from svc_audit_daily_actors
    order by 2`);
}

/** The first day the sweep keeps the rollups of: the UTC day of the retention horizon. */
async function horizonDay(): Promise<string> {
  return (await service.ctx.db.one(`select (retained_before at time zone 'UTC')::date::text as day from svc_audit_rollup_state`)).day;
}

describe('the audit rollups\' prune, tenant by tenant', { timeout: 120_000 }, () => {
  it('deletes every rollup of days before the horizon, of every tenant, in small batches, and keeps every later one as it was', async () => {
    const { db } = service.ctx;
    // 600 entries per scope over 30 days, with actors: some 20 rollup rows per tenant and day.
    await db.none(`
      insert into svc_audit (id, occurred_at, tenant_id, actor_kind, actor_id, action, entity_type, entity_id, outcome)
      select svc_audit_next_id(), now() - make_interval(secs => i * (30 * 86400.0 / 600)), t, 'user',
             case when i % 5 = 0 then null else 'actor-' || (i % 7) end,
             (array['record.create', 'record.update', 'auth.login'])[1 + i % 3],
             case when i % 4 = 0 then null else 'Company' end, 'e' || i, case when i % 9 = 0 then 'denied' else 'success' end
        from generate_series(1, 600) i, unnest($1::text[]) t`, [TENANTS]);
    await foldAuditRollups(db, { batch: 1_000, settleMs: 0 });
    expect((await db.one(`select count(*)::int as n from svc_audit where id > (select folded_to from svc_audit_rollup_state)`)).n).toBe(0);
    const before = await rollups();
    // A prune cut short once: prune-c's daily rows of its oldest days gone, its actors' rows left. Found through the actors' table.
    await db.none(`delete from svc_audit_daily where tenant_id = 'prune-c' and day < (now() at time zone 'UTC')::date - 25`);

    await pruneAudit(db, 20, 7);

    const day = await horizonDay();
    expect(Date.parse(day)).toBeGreaterThan(Date.now() - 22 * DAY);
    const after = await rollups();
    const old = before.filter((r) => r.day < day);
    // Every scope had rollups before the horizon, in both tables, more than one batch of them.
    for (const tenant of TENANTS) {
      for (const table of ['daily', 'actor']) {
        expect(old.filter((r) => r.row.startsWith(`${table} ${tenant} `)).length, `${table} '${tenant}'`).toBeGreaterThan(7);
      }
    }
    expect(after.filter((r) => r.day < day)).toEqual([]);
    expect(after).toEqual(before.filter((r) => r.day >= day));
    expect(after.length).toBeGreaterThan(0);
  });

  it('walks the tenants through the (day, tenant_id) indexes and deletes a tenant\'s rows through the keys', async () => {
    const { db } = service.ctx;
    // At scale: 300 tenants, 60 days, 4 daily and 3 actor rows per tenant and day.
    await db.none(`insert into svc_audit_daily (tenant_id, day, action, outcome, entity_type, entries)
      select 'big-' || t, (now() at time zone 'UTC')::date - d, 'a' || k, 'success', '', 1
        from generate_series(1, 300) t, generate_series(0, 59) d, generate_series(1, 4) k`);
    await db.none(`insert into svc_audit_daily_actors (tenant_id, day, actor_id, entries, last_at)
      select 'big-' || t, (now() at time zone 'UTC')::date - d, 'actor-' || k, 1, now() - make_interval(days => d)
        from generate_series(1, 300) t, generate_series(0, 59) d, generate_series(1, 3) k`);
    await db.none('analyze svc_audit_daily; analyze svc_audit_daily_actors');
    const walks = await capture(/from svc_audit_daily_actors r\s+where r\.day </, async () => {
      const prunes = await capture(/delete from svc_audit_daily r\b/, () => pruneAudit(db, 10, 50));
      expect(new Set(prunes.map((p) => p.values[0])).size).toBeGreaterThanOrEqual(300);
      for (const prune of prunes.slice(0, 3)) {
        expect(prune.values[0]).toMatch(/^big-/);
        for (const table of ['svc_audit_daily', 'svc_audit_daily_actors']) {
          const scans = await scansOf(prune, table);
          expect(scans.length, table).toBeGreaterThan(0);
          // Through the key (tenant_id, day, ...): an index scan, or a bitmap heap scan over the key's bitmap; never a sequential scan.
          expect(scans.filter((scan) => scan !== 'Bitmap Heap Scan' && !scan.endsWith(`Scan ${table}_pkey`)), table).toEqual([]);
          expect(scans.some((scan) => scan.endsWith(`Scan ${table}_pkey`)), table).toBe(true);
        }
      }
    });
    // One walk step per tenant with old rollups, and one that finds none.
    expect(walks.length).toBeGreaterThanOrEqual(301);
    expect(await scansOf(walks[0], 'svc_audit_daily')).toEqual(['Index Only Scan svc_audit_daily_day_tenant']);
    expect(await scansOf(walks[0], 'svc_audit_daily_actors')).toEqual(['Index Only Scan svc_audit_daily_actors_day_tenant']);
    const day = await horizonDay();
    const left = await db.one(`select (select count(*)::int from svc_audit_daily where day < $1::date) + (select count(*)::int from svc_audit_daily_actors where day < $1::date) as old,
      (select count(*)::int from svc_audit_daily where tenant_id like 'big-%') as kept`, [day]);
    expect(left.old).toBe(0);
    expect(left.kept).toBe(300 * 4 * ((Date.parse(new Date().toISOString().slice(0, 10)) - Date.parse(day)) / DAY + 1));
  });
});
