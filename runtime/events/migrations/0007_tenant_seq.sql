-- svc-gen runtime: the per-tenant feed position (ADR 025 decision 4). In tenant
-- mode (SVC_FEED_CURSOR=tenant, the default where the citus extension is
-- installed) every transaction that appends bumps its tenant's head row and
-- stamps tenant_seq on its events and changes; the feed then pages per tenant
-- by (tenant_id, tenant_seq). In global mode nothing writes these (the
-- (tx, seq) reader of ADR 010 stays the fast path), but the schema is the same.
-- The columns are nullable without a default: catalog only on a 10M-row log.
-- The head table is distributed by tenant_id on Citus, co-located with the log.
-- step 1 transactional: add svc_events.tenant_seq and svc_changes.tenant_seq, the tenant head table and its bump function
alter table svc_events add column if not exists tenant_seq bigint;
alter table svc_changes add column if not exists tenant_seq bigint;
create table if not exists svc_tenant_heads (
  tenant_id text primary key,
  last_seq bigint not null
);
-- The next position of a tenant, for a statement that appends (records' create,
-- the job plane): the head row stays locked until the statement's transaction
-- commits, so positions are handed out in commit order, gapless.
create or replace function svc_tenant_seq_next(tenant text) returns bigint
  language sql volatile as $$
    insert into svc_tenant_heads as h (tenant_id, last_seq) values (tenant, 1)
    on conflict (tenant_id) do update set last_seq = h.last_seq + 1
    returning last_seq
  $$;
-- step 2 online: unique index on svc_events (tenant_id, tenant_seq) for the per-tenant feed
create unique index concurrently if not exists svc_events_tenant_position on svc_events (tenant_id, tenant_seq) where tenant_seq is not null;
-- step 3 online: unique index on svc_changes (tenant_id, tenant_seq) for the per-tenant feed
create unique index concurrently if not exists svc_changes_tenant_position on svc_changes (tenant_id, tenant_seq) where tenant_seq is not null;
