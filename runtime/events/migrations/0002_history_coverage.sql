-- svc-gen runtime: persistent history coverage. A row means the event log of a
-- model has a gap (events not written under policy `off`, or pruned under
-- `retained`). A gap is never erased: switching back to `full` does not
-- recreate missing events, so a replay of that model stays refused.
create table svc_history_coverage (
  model text primary key,
  reason text not null,
  gap_since timestamptz not null default now()
);
