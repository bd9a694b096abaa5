/**
 * GET /audit/statistics from the daily rollups (rollup.ts, ADR 022 decision 8):
 * the same answer as counting the range's entries (query.ts `statistics`, the
 * direct count the tests compare with), at a cost that follows the days of
 * the range, not its entries.
 *
 * One snapshot (a read-only repeatable-read transaction): the rollups' state,
 * then one statement. The range [from, to) splits into
 *
 * - whole UTC days read from the rollups: days that start at or after `from`,
 *   end at or before `to` (or, for the day of `to`, hold no folded entry at or
 *   after `to`), and start at or after the retention horizon (a day the sweep
 *   has begun to delete may count deleted entries);
 * - everything else counted from the log through tenant-leading indexes: the
 *   partial days at both ends (`svc_audit_tenant_time`, at most a day each)
 *   and, inside the rollup days, the entries after the watermark
 *   (`(tenant_id, id)` from the watermark: a few seconds of writes).
 *
 * Without a rollup day in range (a range within one day, or nothing folded
 * yet), the whole range is counted from the log, as before the rollups.
 */
import type { Db } from '../db/index.ts';
import { compile, sql, type Sql } from '../sql/index.ts';
import type { TenantScope } from '../tenancy/index.ts';
import { LAST_AT, toStatistics, TOP_ACTORS, type AuditStatistics } from './query.ts';

const DAY_MS = 86_400_000;

interface RollupState {
  /** Every entry with an id up to this one is in the rollups, no other. */
  readonly folded_to: string;
  /** True when no folded entry is at or after `to`: the rollup of the day of `to` ends before `to`. */
  readonly folded_before_to: boolean | null;
  /** The first day (YYYY-MM-DD) the retention sweep has not begun to delete; null when it never ran. */
  readonly first_kept_day: string | null;
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const at = (ms: number) => sql.value(new Date(ms).toISOString(), 'timestamptz');

/** The scope's entries with `occurred_at` in [from, to), and `extra` conditions, from the log. */
function logRows(scope: TenantScope, from: number, to: number, extra: Sql = sql``): Sql {
  return sql`select a.action, a.outcome, a.entity_type, a.actor_id, a.occurred_at from svc_audit a
     where ${scope.predicate('a')} ${extra} and a.occurred_at >= ${at(from)} and a.occurred_at < ${at(to)}`;
}

export async function rollupStatistics(db: Db, scope: TenantScope, range: { from: Date; to: Date }): Promise<AuditStatistics> {
  const from = range.from.getTime();
  const to = range.to.getTime();
  const row = await db.tx('svc-audit-statistics', async (t) => {
    await t.none('set transaction isolation level repeatable read, read only');
    const state = await t.one<RollupState>(compile(sql`
      select s.folded_to::text as folded_to, s.folded_max_at < ${at(to)} as folded_before_to,
             (((s.retained_before at time zone 'UTC') - interval '1 microsecond')::date + 1)::text as first_kept_day
        from svc_audit_rollup_state s`));
    // Whole days [first, end) from the rollups (day starts, in ms).
    const kept = state.first_kept_day === null ? -Infinity : Date.parse(`${state.first_kept_day}T00:00:00Z`);
    const first = Math.max(Math.ceil(from / DAY_MS) * DAY_MS, kept);
    // The day of `to` too when no folded entry is at or after `to` (its rollup is then all before `to`).
    const end = state.folded_before_to !== false ? Math.ceil(to / DAY_MS) * DAY_MS : Math.floor(to / DAY_MS) * DAY_MS;
    const rollups = state.folded_to !== '0' && first < end;
    const parts: Sql[] = [];
    if (!rollups) parts.push(logRows(scope, from, to));
    else {
      const covered = Math.min(end, to);
      if (from < first) parts.push(logRows(scope, from, first));
      if (covered < to) parts.push(logRows(scope, covered, to));
      parts.push(logRows(scope, first, covered, sql`and a.id > ${sql.value(state.folded_to, 'bigint')}`));
    }
    // The scope's rows of the rollups (the global scope is '', ADR 025); the days are bound untyped
    // (as dates, from the column): a text cast to date would hide their values from the planner.
    const mine = scope.over(sql`r.tenant_id`);
    const days = rollups
      ? sql`${mine} and r.day >= ${sql.value(dayOf(first))} and r.day < ${sql.value(dayOf(end))}`
      : sql`${mine} and false`;
    return t.one(compile(sql`
      with e as materialized (${sql.join(parts, ' union all ')}),
      g as materialized (
        select action, outcome, entity_type, sum(n)::int as n from (
          select r.action, r.outcome, nullif(r.entity_type, '') as entity_type, r.entries as n from svc_audit_daily r where ${days}
          union all
          select action, outcome, entity_type, count(*) from e group by 1, 2, 3) x
         group by 1, 2, 3),
      actors as (
        select actor_id, sum(n)::int as n, max(last_at) as last_at from (
          select r.actor_id, r.entries as n, r.last_at from svc_audit_daily_actors r where ${days}
          union all
          select actor_id, count(*), max(occurred_at) from e where actor_id is not null group by 1) x
         group by actor_id order by n desc, actor_id limit ${sql.value(TOP_ACTORS, 'int')})
      select (select coalesce(sum(n), 0)::int from g) as total,
             (select coalesce(jsonb_object_agg(action, n), '{}') from (select action, sum(n)::int as n from g group by action) x) as by_action,
             (select coalesce(jsonb_object_agg(outcome, n), '{}') from (select outcome, sum(n)::int as n from g group by outcome) x) as by_outcome,
             (select coalesce(jsonb_agg(jsonb_build_object('entityType', entity_type, 'count', n) order by n desc, entity_type), '[]')
                from (select entity_type, sum(n)::int as n from g where entity_type is not null group by entity_type) x) as by_entity_type,
             (select coalesce(jsonb_agg(jsonb_build_object('actorId', actor_id, 'count', n, 'lastAt', ${LAST_AT}) order by n desc, actor_id), '[]')
                from actors) as top_actors`, { scope }));
  });
  return toStatistics(row, range);
}
