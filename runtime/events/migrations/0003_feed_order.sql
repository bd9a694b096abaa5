-- svc-gen runtime: an order the change feed can trust (ADR 010).
-- `seq` (bigserial, from 0001) orders events inside one transaction; `tx` is
-- the writing transaction's id. The feed reads only rows whose `tx` lies below
-- pg_snapshot_xmin(pg_current_snapshot()) (every such transaction has ended),
-- in (tx, seq) order, so a transaction that commits late is never skipped.
alter table svc_events add column tx xid8 not null default pg_current_xact_id();

create index svc_events_tx_seq on svc_events (tx, seq);

-- Under SVC_HISTORY_POLICY=off a model change writes no event, but the feed
-- must still carry it: one small row here, numbered from the event log's own
-- sequence so that both tables read as one log. Pruned after a day.
create table svc_changes (
  seq bigint primary key default nextval('svc_events_seq_seq'),
  tx xid8 not null default pg_current_xact_id(),
  id text not null unique,
  stream_type text not null,
  stream_id text not null,
  event_type text not null,
  tenant_id text,
  occurred_at timestamptz not null default now()
);

create index svc_changes_tx_seq on svc_changes (tx, seq);
