-- svc-gen runtime: the audit log (CONTRACT section 9). One row per committed
-- change, written in the change's own transaction, and one per denied attempt.
-- `id` orders entries (newest first = id desc) and is the keyset of the routes.
create table svc_audit (
  id bigint generated always as identity primary key,
  occurred_at timestamptz not null default now(),
  tenant_id text,
  actor_kind text not null check (actor_kind in ('user', 'worker', 'system', 'anonymous')),
  actor_id text,
  actor_role text,
  action text not null,
  entity_type text,
  entity_id text,
  event_id text,
  outcome text not null check (outcome in ('success', 'denied', 'error')),
  changes jsonb,
  ip text,
  user_agent text,
  request_id text
);

-- Every route filters by tenant (`tenant_id = $1` or `tenant_id is null`) and pages by
-- id. Each index is paid by every write, so only the selective filters get one:
-- `action` and a success `outcome` are read through the tenant index.
create index svc_audit_tenant_id on svc_audit (tenant_id, id);
create index svc_audit_entity on svc_audit (tenant_id, entity_type, entity_id, id);
create index svc_audit_actor on svc_audit (tenant_id, actor_id, id);
-- Denials and errors are rare: a partial index finds them without indexing every success.
create index svc_audit_unsuccessful on svc_audit (tenant_id, outcome, id) where outcome <> 'success';
-- Time ranges (from/to, statistics) and the retention sweep: rows arrive in time
-- order, so a BRIN index (a few pages, nearly free to maintain) narrows them.
create index svc_audit_occurred on svc_audit using brin (occurred_at);
