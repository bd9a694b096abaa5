-- svc-gen runtime: per-tenant cursors of durable feed consumers in tenant mode
-- (ADR 025 decision 4). A consumer keeps one row per tenant it has read: the
-- last tenant_seq it handled there. Coordinator-local on Citus, as
-- svc_feed_cursors. A tenant without a row is read from the consumer's
-- starting point (its svc_feed_cursors row: 'origin' reads it from 0).
create table svc_feed_tenant_cursors (
  consumer text not null,
  tenant_id text not null,
  position bigint not null,
  updated_at timestamptz not null default now(),
  primary key (consumer, tenant_id)
);
