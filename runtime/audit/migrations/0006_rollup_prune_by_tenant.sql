-- svc-gen runtime: the retention sweep prunes the audit rollups tenant by
-- tenant (ADR 025: on Citus a tenant's rollups are one shard's, and a row
-- address (ctid) means nothing across shards). It finds the tenants with
-- rollups of days before the retention horizon by walking the (day, tenant)
-- pairs below the horizon, one index descent per tenant, then deletes each
-- tenant's old days through the tables' keys (tenant_id, day, ...). The (day)
-- indexes of 0004 served the old pick by day over every tenant: replaced by
-- (day, tenant_id). The rollups are small (a few rows per tenant and day);
-- every step is online, no writer of the log waits.
-- step 1 online: add index svc_audit_daily_day_tenant on svc_audit_daily (day, tenant_id), the prune's walk over tenants
create index concurrently if not exists svc_audit_daily_day_tenant on svc_audit_daily (day, tenant_id);
-- step 2 online: add index svc_audit_daily_actors_day_tenant on svc_audit_daily_actors (day, tenant_id), the prune's walk over tenants
create index concurrently if not exists svc_audit_daily_actors_day_tenant on svc_audit_daily_actors (day, tenant_id);
-- step 3 online: drop index svc_audit_daily_day (day), replaced by svc_audit_daily_day_tenant
drop index concurrently if exists svc_audit_daily_day;
-- step 4 online: drop index svc_audit_daily_actors_day (day), replaced by svc_audit_daily_actors_day_tenant
drop index concurrently if exists svc_audit_daily_actors_day;
