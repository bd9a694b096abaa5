-- svc-gen runtime: the durable event log (one row per change of a model record or job).
create table svc_events (
  seq bigserial primary key,
  id text not null unique,
  stream_type text not null,
  stream_id text not null,
  version integer not null,
  event_type text not null,
  data jsonb,
  actor_id text,
  tenant_id text,
  occurred_at timestamptz not null default now(),
  constraint svc_events_stream_version unique (stream_type, stream_id, version)
);

create index svc_events_type_seq on svc_events (stream_type, seq);
