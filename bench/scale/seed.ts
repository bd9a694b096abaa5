/**
 * The scale bench's data, written with generate_series straight in SQL (no
 * API, no event per row from the runtime): deals over 1,000 tenants plus one
 * big tenant and a few rows of the global scope, their projection rows (the
 * runtime's own text conversion), one `Created` event per deal (and
 * `Updated` ones when more events than deals are asked), audit entries and
 * jobs. The durable consumers' cursors are then moved past the seed (as if
 * they had applied it), the audit statistics' rollups hold the seeded log
 * (as the runtime's fold would have made them, in one statement), and every
 * table is vacuumed and analysed, as a production table would be.
 */
import pg from 'pg';
import { columnList, textList } from '../../runtime/projections/plan.ts';
import type { TableProjection } from '../../runtime/projections/index.ts';
import { compile, sql, type Sql } from '../../runtime/sql/index.ts';

/** A connection of the seed's own: no statement time limit (a chunk of a million rows takes a while). */
interface Db {
  none(statement: Sql): Promise<void>;
}

export async function seedConnection(url: string): Promise<Db & { end(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('set statement_timeout = 0');
  return {
    async none(statement) {
      const { text, values } = compile(statement);
      await client.query(text, values);
    },
    end: () => client.end(),
  };
}

export interface Sizes {
  readonly records: number;
  readonly bigTenant: number;
  readonly events: number;
  readonly audit: number;
  readonly jobs: number;
}

/** The sizes of a run with `records` deals: the issue's proportions (10M, 1M, 10M, 5M, 5M), env overrides for the big one. */
export function sizesFor(records: number, env: NodeJS.ProcessEnv = {}): Sizes {
  const scaled = (name: string, share: number) => Number(env[name] ?? Math.round(records * share));
  return {
    records,
    // At least 100 pages of 20 rows: the 100th keyset page exists at every size.
    bigTenant: Math.max(2_100, scaled('BENCH_SCALE_BIG_TENANT', 0.1)),
    events: scaled('BENCH_SCALE_EVENTS', 1),
    audit: scaled('BENCH_SCALE_AUDIT', 0.5),
    jobs: scaled('BENCH_SCALE_JOBS', 0.5),
  };
}

/** A rough upper bound of the disk a seed takes (rows, their indexes, the projection). */
export function diskNeeded(s: Sizes): number {
  return (s.records + s.bigTenant) * 900 + s.events * 450 + s.audit * 400 + s.jobs * 400;
}

export const BIG_TENANT = 'big';
export const TENANT = 't0001';
export const QUEUE = 'q1';

/** A ULID-shaped id (26 Crockford characters, ordered by n): `prefix` of 4, n in 22 digits. */
const idOf = (prefix: string, n: string) => sql`${sql.raw(`'${prefix}'`)} || lpad(${sql.raw(n)}::text, 22, '0')`;
/** 1,000 tenants t0001..t1000 and, for one n in 1,001, the global scope (null). */
// The global scope is '' in the tenant tables (layout 3, ADR 025) and null in the jobs' (coordinator-local).
const TENANT_OF = sql.raw(`case when n % 1001 = 0 then '' else 't' || lpad((n % 1001)::text, 4, '0') end`);
const JOB_TENANT_OF = sql.raw(`case when n % 1001 = 0 then null else 't' || lpad((n % 1001)::text, 4, '0') end`);
const CHUNK = 1_000_000;

async function chunked(db: Db, total: number, write: (from: number, to: number) => Promise<void>): Promise<void> {
  for (let from = 1; from <= total; from += CHUNK) await write(from, Math.min(total, from + CHUNK - 1));
}

const range = (from: number, to: number) => sql`generate_series(${sql.value(from, 'bigint')}, ${sql.value(to, 'bigint')}) as n`;

async function seedDeals(db: Db, s: Sizes, say: (line: string) => void): Promise<void> {
  // Deals 1..records spread over the tenants; records+1..records+bigTenant belong to the big tenant.
  const total = s.records + s.bigTenant;
  await chunked(db, total, async (from, to) => {
    await db.none(sql`
      insert into deal (id, tenant_id, title, amount, stage, created_at, updated_at)
      select ${idOf('01JD', 'n')}, case when n > ${sql.value(s.records, 'bigint')} then ${sql.value(BIG_TENANT, 'text')} else ${TENANT_OF} end,
             'Deal ' || n, ((n * 7919) % 1000003) / 100.0, (array['lead', 'won', 'lost'])[1 + n % 3],
             now() - make_interval(secs => (${sql.value(total, 'bigint')} - n) / 1000.0), now() - make_interval(secs => (${sql.value(total, 'bigint')} - n) / 1000.0)
        from ${range(from, to)}`);
    say(`deals ${to.toLocaleString('en')} / ${total.toLocaleString('en')}`);
  });
}

async function seedProjection(db: Db, p: TableProjection): Promise<void> {
  await db.none(sql`insert into ${sql.ident(p.table)} (${columnList(p)})
    select ${textList(p, 'b')} from ${sql.ident(p.baseTable)} b where b."deleted_at" is null`);
}

async function seedEvents(db: Db, s: Sizes, say: (line: string) => void): Promise<void> {
  const deals = s.records + s.bigTenant;
  await chunked(db, s.events, async (from, to) => {
    // Event n is deal ((n - 1) % deals) + 1's version ((n - 1) / deals) + 1: Created first, then Updated.
    await db.none(sql`
      insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id, occurred_at)
      select ${idOf('01JE', 'n')}, 'Deal', ${idOf('01JD', 'd')}, v, case when v = 1 then 'Created' else 'Updated' end,
             jsonb_build_object('title', 'Deal ' || d), 'u' || (d % 5000),
             case when d > ${sql.value(s.records, 'bigint')} then ${sql.value(BIG_TENANT, 'text')}
                  when d % 1001 = 0 then '' else 't' || lpad((d % 1001)::text, 4, '0') end,
             now() - make_interval(secs => (${sql.value(s.events, 'bigint')} - n) / 1000.0)
        from ${range(from, to)}, lateral (select ((n - 1) % ${sql.value(deals, 'bigint')}) + 1 as d, ((n - 1) / ${sql.value(deals, 'bigint')})::int + 1 as v) x`);
    say(`events ${to.toLocaleString('en')} / ${s.events.toLocaleString('en')}`);
  });
}

async function seedAudit(db: Db, s: Sizes, say: (line: string) => void): Promise<void> {
  await chunked(db, s.audit, async (from, to) => {
    // Every tenth entry is the big tenant's, the others spread like the deals.
    await db.none(sql`
      insert into svc_audit (id, occurred_at, tenant_id, actor_kind, actor_id, actor_role, action, entity_type, entity_id, outcome, changes)
      select svc_audit_next_id(), now() - make_interval(secs => (${sql.value(s.audit, 'bigint')} - n) / 100.0),
             case when n % 10 = 0 then ${sql.value(BIG_TENANT, 'text')} else ${TENANT_OF} end, 'user', 'u' || (n % 5000), 'Sales',
             (array['record.create', 'record.update', 'record.delete', 'auth.login'])[1 + n % 4], 'Deal', ${idOf('01JD', 'n')},
             case when n % 50 = 0 then 'denied' else 'success' end, '{"title": ["a", "b"]}'::jsonb
        from ${range(from, to)}`);
    say(`audit ${to.toLocaleString('en')} / ${s.audit.toLocaleString('en')}`);
  });
}

async function seedJobs(db: Db, s: Sizes, say: (line: string) => void): Promise<void> {
  await chunked(db, s.jobs, async (from, to) => {
    // 2 % queued (the lease bench's backlog), 1 % dead, the rest succeeded with a result: a queue that ran for a while.
    await db.none(sql`
      insert into svc_jobs (id, queue, kind, payload, status, attempts, result, error, tenant_id, created_at, updated_at)
      select ${idOf('01JJ', 'n')}, 'q' || (n % 20), 'send', '{"to": "someone"}'::jsonb,
             case when n % 100 < 2 then 'queued' when n % 100 = 2 then 'dead' else 'succeeded' end,
             case when n % 100 < 2 then 0 else 1 end, case when n % 100 > 2 then '{"ok": true}'::jsonb end,
             case when n % 100 = 2 then 'failed for good' end, ${JOB_TENANT_OF},
             now() - make_interval(secs => (${sql.value(s.jobs, 'bigint')} - n) / 100.0), now() - make_interval(secs => (${sql.value(s.jobs, 'bigint')} - n) / 100.0)
        from ${range(from, to)}`);
    say(`jobs ${to.toLocaleString('en')} / ${s.jobs.toLocaleString('en')}`);
  });
  // The lease bench's queue has a backlog at every size (1,000 more queued jobs, the oldest first).
  await db.none(sql`
    insert into svc_jobs (id, queue, kind, payload, tenant_id, created_at, visible_at)
    select ${idOf('01JK', 'n')}, ${sql.value(QUEUE, 'text')}, 'send', '{"to": "someone"}'::jsonb, ${JOB_TENANT_OF},
           now() - interval '1 day' + make_interval(secs => n), now() - interval '1 day' + make_interval(secs => n)
      from ${range(1, 1_000)}`);
}

/** The audit rollups (runtime/audit/rollup.ts) of the whole seeded log, and the fold's watermark after it. */
async function seedAuditRollups(db: Db): Promise<void> {
  await db.none(sql`
    insert into svc_audit_daily (tenant_id, day, action, outcome, entity_type, entries)
    select coalesce(tenant_id, ''), (occurred_at at time zone 'UTC')::date, action, outcome, coalesce(entity_type, ''), count(*)
      from svc_audit group by 1, 2, 3, 4, 5`);
  await db.none(sql`
    insert into svc_audit_daily_actors (tenant_id, day, actor_id, entries, last_at)
    select coalesce(tenant_id, ''), (occurred_at at time zone 'UTC')::date, actor_id, count(*), max(occurred_at)
      from svc_audit where actor_id is not null group by 1, 2, 3`);
  await db.none(sql`
    update svc_audit_rollup_state
       set folded_to = (select coalesce(max(id), 0) from svc_audit), folded_max_at = (select max(occurred_at) from svc_audit),
           updated_at = now()`);
}

/** Every durable consumer has applied everything up to the end of the seed. */
async function advanceCursors(db: Db): Promise<void> {
  await db.none(sql`
    update svc_feed_cursors set tx = last.tx, seq = last.seq, updated_at = now()
      from (select tx, seq from svc_events order by tx desc, seq desc limit 1) last`);
}

export async function seed(db: Db, s: Sizes, projection: TableProjection, say: (line: string) => void): Promise<void> {
  await seedDeals(db, s, say);
  await seedProjection(db, projection);
  say('projection rows copied');
  await seedEvents(db, s, say);
  await seedAudit(db, s, say);
  await seedAuditRollups(db);
  say('audit rollups folded');
  await seedJobs(db, s, say);
  await advanceCursors(db);
  for (const table of ['deal', projection.table, 'svc_events', 'svc_audit', 'svc_audit_daily', 'svc_audit_daily_actors', 'svc_jobs']) {
    await db.none(sql`vacuum (analyze) ${sql.ident(table)}`);
    say(`vacuum analyze ${table}`);
  }
}
