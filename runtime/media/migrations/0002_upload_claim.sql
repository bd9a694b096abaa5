-- svc-gen runtime: an upload URL takes one body, and staged bytes that land after
-- their upload was committed or deleted are swept (issue 26).

-- The claim of PUT /media/upload/{id}: 'receiving' while a body streams in (taken
-- by one conditional update, released when the body fails), 'received' once it is
-- stored; a second body is refused in either state.
alter table svc_media add column upload_state text check (upload_state in ('receiving', 'received'));

-- A presigned upload keeps its staging key and the URL's expiry after its commit:
-- an S3 URL can still be replayed until then, and the sweep removes what it left.
drop index svc_media_pending_expiry;
create index svc_media_staged_expiry on svc_media (expires_at) where staging_key is not null;
