-- svc-gen runtime: an index for the prune of svc_changes (ADR 022). The
-- event log's own reads already have theirs: a stream's history by
-- (stream_type, stream_id, version), the feed by (tx, seq), the history sweep
-- by (stream_type, seq). pruneChanges deletes by age; rows arrive in time
-- order, so a BRIN index (a few pages, nearly free for writers) finds them
-- without reading the table.
-- step 1 online: add index svc_changes_occurred on svc_changes using brin (occurred_at)
create index concurrently if not exists svc_changes_occurred on svc_changes using brin (occurred_at);
