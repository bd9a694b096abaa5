-- svc-gen runtime: per-tenant daily rollups of the audit log for
-- /audit/statistics (ADR 022, decision 8), so that statistics over a range
-- read a few rows per day instead of every entry of the range.
--
-- The rollups are kept by the runtime, not by triggers (runtime/audit/rollup.ts):
-- one instance at a time folds the entries after a watermark (`folded_to`, an
-- id) into them in batches of ids, each its own transaction, only up to an id
-- that no open transaction can still write below. Every entry with
-- `id <= folded_to` is counted in the rollups, no other. A statistics read
-- (runtime/audit/statistics.ts) adds the rollups of the whole days of its range
-- to the entries it counts directly: the partial days at its ends and the
-- entries after the watermark, all read through tenant-leading indexes.
--
-- Both rollup tables hold a tenant's rows: the distributable layout (ADR 025):
-- `tenant_id text not null`, '' for the global scope, a tenant-leading key.
-- `entity_type` '' stands for "no entity" (a key column cannot be null; no
-- entity type is empty). The tables are new and empty: every step here is a
-- catalog change of milliseconds that blocks no writer of svc_audit; the
-- runtime folds the existing entries afterwards, in the background.
-- step 1 transactional: the daily rollup tables and the fold's state
create table svc_audit_daily (
  tenant_id text not null,
  day date not null,
  action text not null,
  outcome text not null,
  entity_type text not null,
  entries bigint not null,
  primary key (tenant_id, day, action, outcome, entity_type)
) with (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.02);

create table svc_audit_daily_actors (
  tenant_id text not null,
  day date not null,
  actor_id text not null,
  entries bigint not null,
  last_at timestamptz not null,
  primary key (tenant_id, day, actor_id)
) with (fillfactor = 50, autovacuum_vacuum_scale_factor = 0.02);

-- Every fold updates the counters of today's rows in place: half of each page is
-- left free so that those updates stay on their page (HOT: no new index entry;
-- a later read prunes the old versions as it goes), and vacuum comes early. A
-- read of a tenant's days then visits its live rows, not every version of them.

-- The retention sweep deletes the rollups of days it emptied, across tenants, by day.
create index svc_audit_daily_day on svc_audit_daily (day);
create index svc_audit_daily_actors_day on svc_audit_daily_actors (day);

-- One row (per deployment, not per tenant): the watermark, the latest
-- occurred_at folded, the retention horizon, and the recent marks
-- (`marks_id[i]` was the last id handed out at `marks_at[i]`).
create table svc_audit_rollup_state (
  id boolean primary key default true check (id),
  folded_to bigint not null default 0,
  folded_max_at timestamptz,
  retained_before timestamptz,
  marks_id bigint[] not null default '{}',
  marks_at timestamptz[] not null default '{}',
  updated_at timestamptz not null default now()
);
insert into svc_audit_rollup_state default values;
-- The fold reads the log after its watermark in id order across tenants; the
-- log's key is (tenant_id, id) since layout 3 (0003), so it needs its own
-- index on id, built without blocking the log's writers.
-- step 2 online: add index svc_audit_id on svc_audit (id), the fold's walk past its watermark
create index concurrently if not exists svc_audit_id on svc_audit (id);
