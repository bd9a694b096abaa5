-- svc-gen runtime: media records, the stored bytes they reference, and the sweep's clock.

-- Stored bytes, once per tenant and content. `refcount` counts the committed,
-- live media records pointing at them; at zero `unreferenced_since` starts the
-- grace period after which the sweep removes the bytes.
create table svc_media_blobs (
  tenant_id text,
  sha256 text not null,
  size bigint not null,
  -- The storage driver's key of the bytes.
  storage_key text not null,
  refcount integer not null default 0 check (refcount >= 0),
  unreferenced_since timestamptz,
  created_at timestamptz not null default now()
);
-- Identical bytes within a tenant are stored once (the global scope is the tenant '').
create unique index svc_media_blobs_content on svc_media_blobs (coalesce(tenant_id, ''), sha256);
create index svc_media_blobs_unreferenced on svc_media_blobs (unreferenced_since) where refcount = 0;

-- One row per upload: its own id and owner, whatever bytes it shares.
create table svc_media (
  id text primary key,
  tenant_id text,
  owner_kind text not null check (owner_kind in ('user', 'worker')),
  owner_id text not null,
  filename text not null,
  content_type text not null,
  -- Committed: the size stored. Pending (presigned): the size announced.
  size bigint not null,
  sha256 text,
  status text not null check (status in ('pending', 'committed')),
  -- Pending uploads: where the client puts the bytes, and until when.
  staging_key text,
  expires_at timestamptz,
  created_at timestamptz not null default now(),
  deleted_at timestamptz,
  check (status = 'pending' or sha256 is not null)
);
create index svc_media_pending_expiry on svc_media (expires_at) where status = 'pending';

-- The sweep runs once per interval across every instance: whoever moves
-- `last_run_at` forward (compare and set) does the work.
create table svc_media_sweep (
  id integer primary key check (id = 1),
  last_run_at timestamptz not null
);
insert into svc_media_sweep (id, last_run_at) values (1, '-infinity');
