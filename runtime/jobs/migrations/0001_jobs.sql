-- svc-gen runtime: the durable job queue and the worker tokens that may lease from it.
create table svc_jobs (
  id text primary key,
  queue text not null,
  kind text not null,
  payload jsonb not null default '{}'::jsonb,
  -- 'failed' is never written: it exists so that stats can always report it (spec example).
  status text not null default 'queued' check (status in ('queued', 'leased', 'succeeded', 'dead', 'failed')),
  attempts integer not null default 0,
  max_attempts integer not null default 5,
  priority integer not null default 0,
  idempotency_key text,
  lease_id text,
  -- Seconds a lease lasts: what heartbeat (without visibilitySecs) and progress extend it by.
  lease_secs integer,
  worker_id text,
  -- Queued: when the job becomes eligible. Leased: the lease deadline.
  visible_at timestamptz not null default now(),
  result jsonb,
  error text,
  tenant_id text,
  created_by text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- An idempotency key is unique per queue within a tenant (a tenant never learns another's job id).
create unique index svc_jobs_idempotency on svc_jobs (coalesce(tenant_id, ''), queue, idempotency_key)
  where idempotency_key is not null;
-- The lease scan: eligible jobs of a queue by priority, then age (ULID order).
create index svc_jobs_ready on svc_jobs (queue, priority desc, id) where status = 'queued';
-- The reclaim sweep: expired leases.
create index svc_jobs_lease_deadline on svc_jobs (visible_at) where status = 'leased';

create table svc_worker_tokens (
  id text primary key,
  name text not null,
  queues text[] not null,
  -- SHA-256 (hex) of the token; the token itself is shown once and never stored.
  token_hash text not null unique,
  is_revoked boolean not null default false,
  -- The minting admin's tenant: a tenant-bound token leases only that tenant's jobs.
  tenant_id text,
  created_by text,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
