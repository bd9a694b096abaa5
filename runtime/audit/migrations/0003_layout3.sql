-- svc-gen runtime: the audit log in layout 3 (ADR 025, issue 30):
-- distributable by tenant_id. The global scope's tenant, null until now,
-- becomes the empty string '' (entries still answer tenantId: null),
-- tenant_id becomes NOT NULL without a default (the runtime always writes
-- it), and the primary key becomes (tenant_id, id). `id` stays the identity
-- column the routes page by (every audit read is of one scope); the old
-- (tenant_id, id) index is that key now and goes.
-- Online, as a generated migration on a busy table (docs/migrations.md):
-- nulls filled in keyset batches, NOT NULL through a check added `not valid`
-- and validated, the key built `concurrently` and swapped in one short
-- transactional step (catalog work only: both columns are NOT NULL already).
-- step 1 backfill "svc_audit": the global scope's entries get the tenant ''
update svc_audit set tenant_id = '' where tenant_id is null;
-- step 2 transactional: check svc_audit.tenant_id is not null, for new rows only
alter table svc_audit add constraint svc_audit_tenant_notnull check (tenant_id is not null) not valid;
-- step 3 online: validate svc_audit.tenant_id is not null
alter table svc_audit validate constraint svc_audit_tenant_notnull;
-- step 4 transactional: set svc_audit.tenant_id not null (the validated check spares the scan) and drop the check
alter table svc_audit alter column tenant_id set not null;
alter table svc_audit drop constraint svc_audit_tenant_notnull;
-- step 5 online: add unique index svc_audit_tenant_key on svc_audit (tenant_id, id), the new primary key
create unique index concurrently if not exists svc_audit_tenant_key on svc_audit (tenant_id, id);
-- step 6 transactional: primary key (tenant_id, id)
alter table svc_audit drop constraint svc_audit_pkey,
  add constraint svc_audit_pkey primary key using index svc_audit_tenant_key;
-- step 7 online: drop index svc_audit_tenant_id (tenant_id, id), the primary key now
drop index concurrently if exists svc_audit_tenant_id;
