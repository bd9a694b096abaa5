/**
 * /audit/statistics from the daily rollups (ADR 022 decision 8) answers
 * exactly what counting the entries answers (query.ts `statistics`, the direct
 * count): for ranges across day boundaries, partial days at both ends, entries
 * written after the last fold, after retention deleted part of a day, for
 * several tenants and the global scope, none leaking into another's answer.
 * The fold never passes an entry of a transaction still open, and counts an
 * entry that commits after later ones exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldAuditRollups, pruneAudit } from '../../runtime/audit/index.ts';
import { statistics } from '../../runtime/audit/query.ts';
import { LOCK_KEYS } from '../../runtime/db/locks.ts';
import { rollupStatistics } from '../../runtime/audit/statistics.ts';
import { TenantScope } from '../../runtime/tenancy/index.ts';
import type { TestService } from '../helpers/service.ts';
import { clientFor, startAuditService } from './helpers.ts';

const DAY = 86_400_000;
const TENANTS = ['rollup-a', 'rollup-b', null] as const;

let service: TestService;

beforeAll(async () => {
  service = await startAuditService();
}, 60_000);
afterAll(() => service?.close());

/**
 * `n` entries per tenant spread over the last `days` days (every 37 minutes
 * or so, so every day has entries at both ends), a mix of actions, outcomes,
 * entity types (some none) and actors (some none).
 */
async function seedEntries(days: number, n: number, tag: string): Promise<void> {
  await service.ctx.db.none(`
    insert into svc_audit (id, occurred_at, tenant_id, actor_kind, actor_id, action, entity_type, entity_id, outcome)
    select svc_audit_next_id(), now() - make_interval(secs => i * ($1::int * 86400.0 / $2::int)), t.tenant,
           'user', case when i % 7 = 0 then null else $3 || '-actor-' || (i % 13) end,
           (array['record.create', 'record.update', 'record.delete', 'auth.login'])[1 + i % 4],
           case when i % 5 = 0 then null else (array['Company', 'Contact', 'User'])[1 + i % 3] end, 'e' || i,
           case when i % 11 = 0 then 'denied' when i % 17 = 0 then 'error' else 'success' end
      from generate_series(1, $2::int) i, unnest($4::text[]) as u(t0), lateral (select coalesce(u.t0, '') as tenant) t`, [days, n, tag, TENANTS]);
}

/** Ranges that cut days at every kind of place: midnight-aligned, partial at either end, within one day, up to now and beyond the log. */
function ranges(now: number): Array<{ from: Date; to: Date }> {
  const midnight = Math.floor(now / DAY) * DAY;
  const spans: Array<[number, number]> = [
    [now - 30 * DAY, now],
    [now - 45 * DAY, now],
    [midnight - 10 * DAY, midnight],
    [midnight - 10 * DAY, midnight - 3 * DAY],
    [midnight - 10 * DAY + 3_600_000, midnight - 3 * DAY + 7_200_000],
    [midnight - 2 * DAY + 1, now - 1],
    [midnight - 5 * DAY + 60_000, midnight - 5 * DAY + 3_600_000],
    [midnight, now],
    [now - 60 * DAY, now - 59 * DAY],
    [midnight - DAY, now + DAY],
  ];
  return spans.map(([from, to]) => ({ from: new Date(from), to: new Date(to) }));
}

/** For every tenant and range: the rollups' answer is the direct count's. */
async function expectSameAsDirect(now = Date.now()): Promise<number> {
  let compared = 0;
  for (const tenant of TENANTS) {
    const scope = TenantScope.of(tenant);
    for (const range of ranges(now)) {
      const direct = await statistics(service.ctx.db, scope, range);
      const rolled = await rollupStatistics(service.ctx.db, scope, range);
      expect(rolled, `${tenant} ${range.from.toISOString()} .. ${range.to.toISOString()}`).toEqual(direct);
      compared += direct.total;
    }
  }
  return compared;
}

async function foldedTo(): Promise<bigint> {
  return BigInt((await service.ctx.db.one(`select folded_to::text as f from svc_audit_rollup_state`)).f);
}

async function foldAll(): Promise<void> {
  const last = BigInt((await service.ctx.db.one(`select coalesce(max(id), 0)::text as m from svc_audit`)).m);
  // The service folds too (every 5 s): whoever holds the lock, the watermark reaches the last entry.
  for (let i = 0; i < 200 && (await foldedTo()) < last; i++) await foldAuditRollups(service.ctx.db, { batch: 500, settleMs: 0 });
  expect(await foldedTo()).toBeGreaterThanOrEqual(last);
}

describe('statistics from the rollups', { timeout: 120_000 }, () => {
  it('equal the direct count across day boundaries, for every tenant, before and after a fold', async () => {
    await seedEntries(40, 3000, 'first');
    // Nothing folded of these yet: every answer comes from the log.
    expect(await expectSameAsDirect()).toBeGreaterThan(0);
    await foldAll();
    const rows = await service.ctx.db.one(`select count(*)::int as n from svc_audit_daily where tenant_id = 'rollup-a'`);
    expect(rows.n).toBeGreaterThan(40);
    expect(await expectSameAsDirect()).toBeGreaterThan(0);
    // Entries after the watermark (not folded yet), in today's and older days: counted from the log beside the rollups.
    await seedEntries(3, 200, 'later');
    expect(await foldedTo()).toBeLessThan(BigInt((await service.ctx.db.one(`select max(id)::text as m from svc_audit`)).m));
    await expectSameAsDirect();
    await foldAll();
    await expectSameAsDirect();
  });

  it('the global scope\'s rollups are stored under \'\', and no tenant\'s rows reach another\'s answer', async () => {
    const scopes = await service.ctx.db.any(`select distinct tenant_id from svc_audit_daily where tenant_id like 'rollup-%' or tenant_id = '' order by 1`);
    expect(scopes.map((r) => r.tenant_id)).toEqual(['', 'rollup-a', 'rollup-b']);
    const range = { from: new Date(Date.now() - 30 * DAY), to: new Date() };
    const a = await rollupStatistics(service.ctx.db, TenantScope.of('rollup-a'), range);
    const nobody = await rollupStatistics(service.ctx.db, TenantScope.of('rollup-nobody'), range);
    expect(nobody.total).toBe(0);
    expect(nobody.topActors).toEqual([]);
    expect(a.topActors.every((actor) => actor.actorId.startsWith('first-') || actor.actorId.startsWith('later-'))).toBe(true);
    // Through the route, in the caller's scope.
    const manager = await clientFor(service, { role: 'Manager', tenantId: 'rollup-b', userId: 'rollup-manager' });
    const answer = (await manager.get(`/audit/statistics?from=${range.from.toISOString()}&to=${range.to.toISOString()}`)).body;
    expect(answer).toEqual(await statistics(service.ctx.db, TenantScope.of('rollup-b'), range));
    // The answer does come from the rollups: a rollup row of a whole day in range, changed by hand, shows in it.
    const day = new Date(Math.floor(Date.now() / DAY) * DAY - 5 * DAY).toISOString().slice(0, 10);
    const bump = (n: number) => service.ctx.db.none(`update svc_audit_daily set entries = entries + $1
      where (tenant_id, day, action, outcome, entity_type) = (select tenant_id, day, action, outcome, entity_type
        from svc_audit_daily where tenant_id = 'rollup-a' and day = $2::date limit 1)`, [n, day]);
    await bump(1000);
    try {
      expect((await rollupStatistics(service.ctx.db, TenantScope.of('rollup-a'), range)).total).toBe(a.total + 1000);
    } finally {
      await bump(-1000);
    }
  });

  it('stay equal while retention deletes part of a day, and the rollups of emptied days go', async () => {
    await foldAll();
    // 12.5 days: the cutoff falls inside a day, whose remaining entries must still be counted right.
    const deleted = await pruneAudit(service.ctx.db, 12, 250);
    expect(deleted).toBeGreaterThan(0);
    const state = await service.ctx.db.one(`select retained_before from svc_audit_rollup_state`);
    expect(Date.parse(state.retained_before)).toBeGreaterThan(Date.now() - 12 * DAY - 60_000);
    const old = await service.ctx.db.one(`
      select (select count(*)::int from svc_audit_daily where day < (now() at time zone 'UTC')::date - 12) +
             (select count(*)::int from svc_audit_daily_actors where day < (now() at time zone 'UTC')::date - 12) as n`);
    expect(old.n).toBe(0);
    await expectSameAsDirect();
    // Entries written with old times after the sweep (a restore, a clock): counted from the log, never from a stale rollup.
    await service.ctx.db.none(`insert into svc_audit (id, occurred_at, tenant_id, actor_kind, actor_id, action, outcome)
      select svc_audit_next_id(), now() - interval '12 days 1 hour', 'rollup-a', 'user', 'old-actor', 'record.create', 'success' from generate_series(1, 3)`);
    await foldAll();
    await expectSameAsDirect();
  });

  it('counts an entry exactly once when a transaction started later commits first: the fold waits for the earlier one', async () => {
    const { db } = service.ctx;
    const audit = service.ctx.services.audit;
    await foldAll();
    // Yesterday and today whole: today's rollup is read (no folded entry is at or after `to`).
    const range = { from: new Date(Math.floor(Date.now() / DAY) * DAY - DAY), to: new Date(Date.now() + DAY) };
    const scope = TenantScope.of('rollup-a');
    const before = (await rollupStatistics(db, scope, range)).total;
    const entry = (actorId: string) => ({ action: 'record.create' as const, tenantId: 'rollup-a', actor: { kind: 'user' as const, id: actorId, role: 'Manager' } });
    const folded = async (actorId: string) => (await db.one(`select coalesce(sum(entries), 0)::int as n from svc_audit_daily_actors
      where tenant_id = 'rollup-a' and actor_id = $1`, [actorId])).n;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let written!: (id: bigint) => void;
    const slowWrote = new Promise<bigint>((resolve) => (written = resolve));
    // The earlier transaction writes its entry (its id made now) and stays open...
    const slow = db.tx(async (t) => {
      await audit.record(t, entry('slow'));
      written(BigInt((await t.one(`select max(id)::text as id from svc_audit where actor_id = 'slow'`)).id));
      await held;
    });
    const slowId = await slowWrote;
    // ...while a transaction started after it writes five entries (larger ids) and commits first.
    await db.tx(async (t) => audit.record(t, [1, 2, 3, 4, 5].map(() => entry('fast'))));
    const fastIds = (await db.any(`select id::text as id from svc_audit where actor_id = 'fast' order by id`)).map((r) => BigInt(r.id));
    expect(fastIds).toHaveLength(5);
    expect(fastIds.every((id) => id > slowId)).toBe(true);
    // The fold, however often it runs, stops below the open transaction's entry (and so below the later ones too)...
    for (let i = 0; i < 3; i++) await foldAuditRollups(db, { settleMs: 0 });
    expect(await foldedTo()).toBeLessThan(slowId);
    expect([await folded('slow'), await folded('fast')]).toEqual([0, 0]);
    // ...and the statistics count what has committed: the five, from the log.
    expect((await rollupStatistics(db, scope, range)).total).toBe(before + 5);
    release();
    await slow;
    expect((await rollupStatistics(db, scope, range)).total).toBe(before + 6);
    await foldAll();
    expect(await foldedTo()).toBeGreaterThan(fastIds[4]);
    // Folded once each, the late one too; and the answer (rollups of both days) is the count's.
    expect([await folded('slow'), await folded('fast')]).toEqual([1, 5]);
    const after = await rollupStatistics(db, scope, range);
    expect(after.total).toBe(before + 6);
    expect(after).toEqual(await statistics(db, scope, range));
    await expectSameAsDirect();
  });

  it('one instance folds at a time: a fold that finds the lock taken does nothing', async () => {
    const { db } = service.ctx;
    await db.task(async (other) => {
      await other.one('select pg_advisory_lock($1)', [LOCK_KEYS.auditRollup]);
      try {
        await db.none(`insert into svc_audit (id, tenant_id, actor_kind, action, outcome) values (svc_audit_next_id(), 'rollup-b', 'system', 'record.create', 'success')`);
        const watermark = await foldedTo();
        expect(await foldAuditRollups(db)).toMatchObject({ ran: false, entries: 0 });
        expect(await foldedTo()).toBe(watermark);
      } finally {
        await other.one('select pg_advisory_unlock($1)', [LOCK_KEYS.auditRollup]);
      }
    });
    await foldAll();
    await expectSameAsDirect();
  });
});
