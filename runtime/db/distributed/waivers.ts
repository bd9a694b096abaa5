/**
 * Statements that are not single-shard today and are allowed to stay so
 * until the change ADR 025 names lands. Each waiver names its reason; the
 * list shrinks as the layout (composite keys, the tenant sentinel) and the
 * per-tenant feed cursor arrive. A waiver matches one class of statement,
 * never a whole table.
 */
import type { Problem } from './analyze.ts';

interface Waiver {
  readonly reason: string;
  readonly kinds: readonly Problem['kind'][];
  /** The statement's class, by text (the runtime builds these from constants). */
  readonly match: RegExp;
}

const WAIVERS: readonly Waiver[] = [
  {
    reason: 'the migration runner\'s backfill (an operator\'s or the runtime\'s schema change, ADR 019): its probe, keyset bounds and batches walk every tenant\'s rows of the table; on Citus a backfill runs on every shard',
    kinds: ['unpinned', 'two-tenants'],
    match: new RegExp([
      /^ ?select not exists \(select 1 from "[a-z0-9_]+"\) as empty, /,
      /^ ?select "[a-z0-9_]+"::text as id from "[a-z0-9_]+" (where .* )?order by "[a-z0-9_]+" offset /,
      /^ ?\/\* svc-migrate [0-9a-f]+ \*\/ /,
    ].map((r) => r.source).join('|')),
  },
  {
    reason: 'the global feed reader (runtime/feed/read.ts): one node\'s order below pg_snapshot_xmin; the per-tenant cursor replaces it on Citus (ADR 025, feed cursor)',
    kinds: ['unpinned'],
    match: /pg_current_snapshot\(\)/,
  },
  {
    reason: 'Job events appended by the jobs plane for a batch of leased jobs of any tenant: jobs are coordinator-local, their streams move with them (ADR 025, layout)',
    kinds: ['unpinned', 'two-tenants'],
    match: /^(?=.*\bsvc_jobs\b)(?=.*'Job')/,
  },
  {
    reason: 'a system read of one stream by id (a job\'s or a workflow run\'s history): those streams move with the coordinator-local tables (ADR 025, layout)',
    kinds: ['unpinned'],
    match: /^\s*select [^;]* from svc_events\s+where stream_type = \$1::text and stream_id = \$2::text and true order by version\s*$/,
  },
  {
    reason: 'the change log\'s retention sweep: a batch of old rows of any tenant deleted by their key (tenant_id, seq), a multi-shard DELETE that Citus runs on every shard in parallel',
    kinds: ['unpinned'],
    match: /^\s*with (gone as \(delete from svc_changes\s+where occurred_at < |doomed as \( ?select tenant_id, seq from svc_changes where occurred_at < )/,
  },
  {
    reason: 'the projections\' refresh and build statements: one statement for a batch of records of several tenants, base and projection matched on their key (tenant_id, id), co-located: a multi-shard statement on Citus (ADR 025, layout 3), kept as one statement per batch so a refresh on one node stays one round trip',
    kinds: ['unpinned', 'two-tenants'],
    match: /delete from "[a-z0-9_]+_projection" p\b/,
  },
  {
    reason: 'the per-tenant feed (ADR 025 decision 4): the durable consumer finds the tenants whose head is past its cursor, one row per tenant, a multi-shard read of svc_tenant_heads that Citus merges; every page it then reads is pinned to one tenant',
    kinds: ['unpinned'],
    match: /^\s*select h\.tenant_id, h\.last_seq, coalesce\(c\.position, 0\) as position from svc_tenant_heads h left join svc_feed_tenant_cursors c on c\.consumer = /,
  },
  {
    reason: 'the per-tenant feed (ADR 025 decision 4): one round trip carries the pages of several tenants, one read-only statement per tenant, each pinned to its tenant (single-shard on Citus); together they are a multi-shard read, never a write',
    kinds: ['two-tenants'],
    match: /^\s*select u\.\*, \(extract\(epoch from clock_timestamp\(\) - u\.occurred_at\) \* 1000\)::float8 as age_ms from \(\(select x\.tx::text as tx, x\.seq, x\.tenant_seq,/,
  },
  {
    reason: 'the per-tenant feed (ADR 025 decision 4): a subscription that resumes `after` an event id looks the id up once (an index on id on every shard) to learn its tenant and place, which it then checks against the subscriber\'s scope',
    kinds: ['unpinned'],
    match: /^\s*select tenant_id, tenant_seq from svc_events where id = \$1::text union all select tenant_id, tenant_seq from svc_changes where id = \$2::text limit 1\s*$/,
  },
  {
    reason: 'a projection rebuild (an operator\'s command) empties the projection and replays the whole log in global seq order: per tenant, by the per-tenant cursor, on Citus (ADR 025, feed cursor)',
    kinds: ['unpinned'],
    match: /^\s*delete from "[a-z0-9_]+_projection"\s*$|from svc_events where stream_type = any\(\$1::text\[\]\) and seq > \$2::bigint order by seq|^\s*insert into svc_projection_versions /,
  },
  {
    reason: 'the operator\'s history diagnostics: an aggregate per stream type, which Citus runs on every shard and merges',
    kinds: ['unpinned'],
    match: /^ ?select stream_type, count\(\*\)::int as events, min\(occurred_at\) as first_at, max\(occurred_at\) as last_at from svc_events where stream_type = any\(\$1::text\[\]\) group by stream_type ?$/,
  },
  {
    reason: 'the audit, history and media sweeps (system work over every tenant) lock a batch with skip locked, which Citus runs on one shard only, and act on rows of several tenants by id: per shard, tenant by tenant, with the layout (ADR 025, layout)',
    kinds: ['unpinned', 'two-tenants'],
    match: new RegExp([
      /^ ?with doomed as \( ?select tenant_id, (id|seq) from (svc_audit|svc_events) where /,
      /^ ?select m\.id, m\.tenant_id, m\.status, m\.staging_key, b\.storage_key as blob_key from svc_media m /,
      /^ ?(delete from svc_media|update svc_media set staging_key = null) where \(tenant_id, id\) in \(select \* from unnest\(\$1::text\[\], \$2::text\[\]\)\) ?$/,
      /^ ?select tenant_id as tenant, sha256, storage_key from svc_media_blobs where refcount = 0 /,
      /^ ?delete from svc_media_blobs b using unnest\(/,
    ].map((r) => r.source).join('|')),
  },
  {
    reason: 'the audit statistics\' fold (runtime/audit/rollup.ts; system work over every tenant, one instance at a time under a transaction lock): it reads the log\'s entries after its watermark, of every tenant, in id order, and upserts their days\' rollups: on Citus a multi-shard read and a multi-shard write of a background job (ADR 022, ADR 025)',
    kinds: ['unpinned', 'two-tenants'],
    match: /^ ?with w as materialized \( ?select a\.id, a\.tenant_id, a\.action, a\.outcome, a\.entity_type, a\.actor_id, a\.occurred_at from svc_audit a where a\.id > /,
  },
  {
    reason: 'the audit rollups\' prune (runtime/audit/retention.ts; system work, one instance at a time) finds the next tenant with rollups of days past the retention by one index descent per table over (day, tenant_id): a multi-shard read of one row per shard, which Citus merges; every delete it then runs is pinned to that tenant',
    kinds: ['unpinned'],
    match: /^ ?select x\.tenant_id, x\.day::text as day from \( ?\(select r\.tenant_id, r\.day from svc_audit_daily r where r\.day < /,
  },
  {
    reason: 'the projections\' drift report (operator diagnostics) compares base and projection over every tenant: a fan-out that needs the (tenant_id, id) join of the layout (ADR 025, layout)',
    kinds: ['unpinned'],
    match: /^ ?with src as \(select coalesce\(b\."id"::text, ''\), coalesce\(b\."tenant_id"::text, ''\)/,
  },
  {
    reason: 'a projection build (ADR 021: a start\'s work over every tenant, batch by batch) counts up to a batch and walks base and projection by their key (tenant_id, id): multi-shard reads, which Citus runs on every shard and merges (order by the key, limit); the build\'s refresh of each batch is the refresh waiver\'s statement (ADR 025, layout 3)',
    kinds: ['unpinned'],
    match: new RegExp([
      /^ ?select \(select count\(\*\)::int from \(select 1 from "[a-z0-9_]+" limit \$1::int\) b\) as base, \(select count\(\*\)::int from \(select 1 from "[a-z0-9_]+_projection" limit \$2::int\) q\) as projection ?$/,
      /^ ?select "id" from "[a-z0-9_]+" where "id" > \$1::text order by "id" limit \$2::int ?$/,
      /^ ?select "tenant_id", "id" from "[a-z0-9_]+" where \("tenant_id", "id"\) > \(\$1::text, \$2::text\) order by "tenant_id", "id" limit \$3::int ?$/,
    ].map((r) => r.source).join('|')),
  },
  {
    reason: 'the operator\'s diagnostics report (an Admin\'s request, runtime/diagnostics/report.ts): bounded row counts, the feed consumers\' lag, the first and last event per model, the projections\' drift over their newest rows: aggregates over every tenant, which Citus runs on every shard and merges',
    kinds: ['unpinned'],
    match: new RegExp([
      /^ ?select count\(\*\)::int as n from \(select 1 from ("[a-z0-9_]+"|svc_[a-z_]+)( where stream_type = \$1::text)? limit \$\d::int\) x ?$/,
      /^ ?with newest as \(select b\."id" from "[a-z0-9_]+" b order by b\."id" desc limit \$1::int\), bound as \(select coalesce\(min\("id"\), ''\) as low, /,
      /^ ?select stream_type, count\(\*\)::int as n from \( select stream_type from \( \(select tx, seq, stream_type from svc_events where \(tx, seq\) > /,
      /^ ?select m\.model, \(select e\.occurred_at from svc_events e where e\.stream_type = m\.model order by e\.seq limit 1\) as first_at, /,
    ].map((r) => r.source).join('|')),
  },
  {
    reason: 'the feed\'s lag in tenant mode (runtime/feed/lag.ts, for the operator\'s diagnostics report): the heads beyond a consumer\'s or the reader\'s per-tenant positions, one row per tenant summed, and their changes by stream read through each tenant\'s (tenant_id, tenant_seq) index up to a bound: aggregates over every tenant, which Citus runs on every shard and merges',
    kinds: ['unpinned', 'two-tenants'],
    match: new RegExp([
      /^ ?select coalesce\(sum\(b\.last_seq - b\.position\), 0\)::text as behind, count\(\*\)::int as tenants from \( ?select h\.tenant_id, h\.last_seq, coalesce\(k\.position, 0\) as position from svc_tenant_heads h /,
      /^ ?select x\.stream_type, count\(\*\)::int as n from \( ?select y\.stream_type from \( ?select h\.tenant_id, h\.last_seq, coalesce\(k\.position, 0\) as position from svc_tenant_heads h /,
    ].map((r) => r.source).join('|')),
  },
];

/** The reason a violation is allowed for now, or null. The patterns read the text with its whitespace collapsed. */
export function waiverOf(problem: Problem, text: string): string | null {
  const flat = text.replace(/\s+/g, ' ');
  for (const w of WAIVERS) if (w.kinds.includes(problem.kind) && w.match.test(flat)) return w.reason;
  return null;
}
