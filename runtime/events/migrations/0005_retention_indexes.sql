-- svc-gen runtime: the retention sweeps walk only what they delete (issue 29).
-- The history sweep (SVC_HISTORY_POLICY=retained) deletes a model's events by
-- age: (stream_type, occurred_at) starts with both of its filters. The sweep of
-- svc_changes deletes by age alone. Built concurrently: the event log may hold
-- millions of rows, and writes go on meanwhile.
-- step 1 online: index svc_events on (stream_type, occurred_at) for the history retention sweep
create index concurrently if not exists svc_events_type_occurred on svc_events (stream_type, occurred_at);
-- step 2 online: index svc_changes on (occurred_at) for its daily sweep
create index concurrently if not exists svc_changes_occurred on svc_changes (occurred_at);
