-- svc-gen runtime: shared state of the ephemeral realtime tier. Never the event
-- log: unlogged tables, whose content may vanish after a database crash (the
-- instances re-register on their next heartbeat).

-- Live server instances. One whose seen_at is older than three heartbeats is
-- dead: its presence rows are ignored, then reaped.
create unlogged table svc_realtime_instances (
  instance_id text primary key,
  started_at timestamptz not null default now(),
  seen_at timestamptz not null default now()
);

-- Who is in which channel, per instance. tenant '' is the global scope.
create unlogged table svc_realtime_presence (
  instance_id text not null,
  tenant text not null,
  channel text not null,
  user_id text not null,
  joined_at timestamptz not null default now(),
  primary key (tenant, channel, user_id, instance_id)
);

create index svc_realtime_presence_instance on svc_realtime_presence (instance_id);

-- Messages too large for a NOTIFY payload (~8000 bytes): the notification
-- carries the row id; rows older than a minute are deleted.
create unlogged table svc_realtime_spill (
  id bigserial primary key,
  payload text not null,
  created_at timestamptz not null default now()
);
