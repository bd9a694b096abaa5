-- svc-gen runtime: bookkeeping of read-model projections.

-- When each projection was last synchronised at start and last rebuilt.
create table svc_projection_state (
  name text primary key,
  last_sync_at timestamptz,
  last_rebuild_at timestamptz,
  last_rebuild_events bigint
);

-- Highest record version a custom projection has applied: makes a live change
-- apply once across all instances.
create table svc_projection_versions (
  projection text not null,
  record_id text not null,
  version integer not null,
  primary key (projection, record_id)
);
