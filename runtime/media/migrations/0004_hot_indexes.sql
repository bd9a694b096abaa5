-- svc-gen runtime: the blob of a media record by its content (ADR 022).
-- svc_media_blobs_content is on (coalesce(tenant_id, ''), sha256): no statement
-- names that expression, so every read of a record (the join on sha256 and
-- `tenant_id is not distinct from`) and every refcount change
-- (`sha256 = $1 and tenant_id = $2`) read the whole table. sha256 leads: the
-- join can use it (`is not distinct from` is no index condition), and a
-- content hash is as selective as a key; the tenant follows, an index
-- condition of the refcount statements.
-- step 1 online: add index svc_media_blobs_sha256 on svc_media_blobs (sha256, tenant_id)
create index concurrently if not exists svc_media_blobs_sha256 on svc_media_blobs (sha256, tenant_id);
