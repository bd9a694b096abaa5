-- svc-gen runtime: an index for each hot read of the audit log that had none
-- (ADR 022), each leading with the tenant, as every route filters by it.
-- Built online: one `create index concurrently` per step, so writers of
-- svc_audit are never blocked while a big table is indexed.
--   svc_audit_tenant_time: /audit/statistics (a bounded range of one scope)
--     and /audit/logs with from/to.
--   svc_audit_action: /audit/logs?action, a rare action's page without
--     walking the scope's whole log.
--   svc_audit_entity_type: /audit/logs?entityType without entityId, newest
--     first without sorting every entry of the type.
--   svc_audit_entity_id replaces svc_audit_entity (tenant_id, entity_type,
--     entity_id, id), which could not serve entityId without entityType: an
--     entity id (a ULID) is as selective alone, and the type, included, is
--     checked inside the index (an index-only walk for the entity route too).
-- step 1 online: add index svc_audit_tenant_time on svc_audit (tenant_id, occurred_at)
create index concurrently if not exists svc_audit_tenant_time on svc_audit (tenant_id, occurred_at);
-- step 2 online: add index svc_audit_action on svc_audit (tenant_id, action, id)
create index concurrently if not exists svc_audit_action on svc_audit (tenant_id, action, id);
-- step 3 online: add index svc_audit_entity_type on svc_audit (tenant_id, entity_type, id)
create index concurrently if not exists svc_audit_entity_type on svc_audit (tenant_id, entity_type, id);
-- step 4 online: add index svc_audit_entity_id on svc_audit (tenant_id, entity_id, id) including entity_type
create index concurrently if not exists svc_audit_entity_id on svc_audit (tenant_id, entity_id, id) include (entity_type);
-- step 5 online: drop index svc_audit_entity, replaced by svc_audit_entity_id
drop index concurrently if exists svc_audit_entity;
