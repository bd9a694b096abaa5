-- svc-gen runtime: which definition a built-in projection's rows were built
-- with, and the progress of a background build (ADR 021). A start compares
-- `definition` with the projection it serves: equal means the durable
-- consumer has kept the rows current and nothing is rebuilt; different (a new
-- projection, a new column, another base type) starts a build of `building`,
-- batch by batch, each batch committing its rows and its position together so
-- that a crash resumes at the last committed batch.
alter table svc_projection_state
  add column definition text,
  add column building text,
  add column build_phase text,
  add column build_after text,
  add column build_done bigint not null default 0,
  add column build_total bigint,
  add column build_started_at timestamptz;
