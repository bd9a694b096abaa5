-- svc-gen runtime: named cursors of durable feed consumers (ADR 010). A
-- consumer advances its row in the same transaction as its effect, so a crash
-- replays the batch instead of losing it. (tx, seq) is the last position
-- consumed: every change at or before it is done.
create table svc_feed_cursors (
  name text primary key,
  tx xid8 not null,
  seq bigint not null,
  updated_at timestamptz not null default now()
);
