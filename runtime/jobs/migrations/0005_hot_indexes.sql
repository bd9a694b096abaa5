-- svc-gen runtime: an index for each hot read of svc_jobs that had none
-- (ADR 022). Built online: one `create index concurrently` per step.
--   svc_jobs_finished: the retention sweep (jobs/retention.ts); each batch
--     reads the oldest finished jobs of one status and nothing else (queued
--     and leased jobs are not in it).
--   svc_jobs_queued_since: GET /jobs/stats' oldestQueuedSeconds, the scope's
--     first entry.
--   svc_jobs_tenant_recent: GET /jobs/recent (and ?queue=), the scope's
--     newest jobs, not every tenant's.
--   svc_jobs_tenant_status: GET /jobs/recent?status=, a rare status (dead)
--     without walking the scope's jobs.
-- step 1 online: add index svc_jobs_finished on svc_jobs (status, updated_at) of finished jobs
create index concurrently if not exists svc_jobs_finished on svc_jobs (status, updated_at) where status in ('succeeded', 'dead');
-- step 2 online: add index svc_jobs_queued_since on svc_jobs (tenant_id, created_at) of queued jobs
create index concurrently if not exists svc_jobs_queued_since on svc_jobs (tenant_id, created_at) where status = 'queued';
-- step 3 online: add index svc_jobs_tenant_recent on svc_jobs (tenant_id, id)
create index concurrently if not exists svc_jobs_tenant_recent on svc_jobs (tenant_id, id);
-- step 4 online: add index svc_jobs_tenant_status on svc_jobs (tenant_id, status, id)
create index concurrently if not exists svc_jobs_tenant_status on svc_jobs (tenant_id, status, id);
