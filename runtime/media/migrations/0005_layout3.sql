-- svc-gen runtime: media records and blobs in layout 3 (ADR 025, issue 30):
-- distributable by tenant_id. The global scope's tenant, null until now,
-- becomes the empty string '' (the API still answers as before), tenant_id
-- becomes NOT NULL without a default (the runtime always writes it), and the
-- keys lead with it:
--   svc_media:       primary key (tenant_id, id) (every lookup of a record
--                    names its tenant: the scope, or the signed upload URL's);
--   svc_media_blobs: primary key (tenant_id, sha256), which replaces the
--                    unique (coalesce(tenant_id, ''), sha256) (the same rows
--                    collide: the global scope was '' there already) and the
--                    (sha256, tenant_id) index of 0004.
-- Online, as a generated migration on a busy table (docs/migrations.md):
-- nulls filled in keyset batches (svc_media_blobs has no id: its batches go by
-- sha256), NOT NULL through a check added `not valid` and validated, the keys
-- built `concurrently` and swapped in short transactional steps, the old
-- indexes dropped concurrently.
-- step 1 backfill "svc_media": the global scope's media records get the tenant ''
update svc_media set tenant_id = '' where tenant_id is null;
-- step 2 backfill "svc_media_blobs" by "sha256": the global scope's blobs get the tenant ''
update svc_media_blobs set tenant_id = '' where tenant_id is null;
-- step 3 transactional: check svc_media.tenant_id and svc_media_blobs.tenant_id are not null, for new rows only
alter table svc_media add constraint svc_media_tenant_notnull check (tenant_id is not null) not valid;
alter table svc_media_blobs add constraint svc_media_blobs_tenant_notnull check (tenant_id is not null) not valid;
-- step 4 online: validate svc_media.tenant_id is not null
alter table svc_media validate constraint svc_media_tenant_notnull;
-- step 5 online: validate svc_media_blobs.tenant_id is not null
alter table svc_media_blobs validate constraint svc_media_blobs_tenant_notnull;
-- step 6 transactional: set svc_media.tenant_id and svc_media_blobs.tenant_id not null (the validated checks spare the scan) and drop the checks
alter table svc_media alter column tenant_id set not null;
alter table svc_media drop constraint svc_media_tenant_notnull;
alter table svc_media_blobs alter column tenant_id set not null;
alter table svc_media_blobs drop constraint svc_media_blobs_tenant_notnull;
-- step 7 online: add unique index svc_media_tenant_key on svc_media (tenant_id, id), the new primary key
create unique index concurrently if not exists svc_media_tenant_key on svc_media (tenant_id, id);
-- step 8 transactional: svc_media's primary key (tenant_id, id)
alter table svc_media drop constraint svc_media_pkey,
  add constraint svc_media_pkey primary key using index svc_media_tenant_key;
-- step 9 online: add unique index svc_media_blobs_key on svc_media_blobs (tenant_id, sha256), the new primary key
create unique index concurrently if not exists svc_media_blobs_key on svc_media_blobs (tenant_id, sha256);
-- step 10 transactional: svc_media_blobs' primary key (tenant_id, sha256)
alter table svc_media_blobs add constraint svc_media_blobs_pkey primary key using index svc_media_blobs_key;
-- step 11 online: drop index svc_media_blobs_content (coalesce(tenant_id, ''), sha256), replaced by the primary key
drop index concurrently if exists svc_media_blobs_content;
-- step 12 online: drop index svc_media_blobs_sha256 (sha256, tenant_id), replaced by the primary key
drop index concurrently if exists svc_media_blobs_sha256;
