-- The lease scan of a tenant-bound worker token: that tenant's eligible jobs of a
-- queue by priority, then age. Through svc_jobs_ready it walked every tenant's
-- queued jobs of the queue until it found its own: a large tenant's backlog made
-- every other tenant's lease slower (plane.ts and lease.ts, the one-tenant branch).
-- Jobs of no tenant are left out: only the any-tenant branch reads them.
create index svc_jobs_ready_tenant on svc_jobs (tenant_id, queue, priority desc, id)
  where status = 'queued' and tenant_id is not null;
