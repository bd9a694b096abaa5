-- svc-gen runtime: the lease's pick, a walk of the ready index that stops at
-- the limit whatever the statistics say.
--
-- Written inline in the lease statement, the pick (`order by priority desc, id
-- limit n for update skip locked`) was planned from svc_jobs' statistics: when
-- they call the table empty (a queue drained and vacuumed, then filled in one
-- burst: reltuples 0 with pages still allocated), every scan is costed at one
-- row, and the planner scanned svc_jobs_queued_since and sorted every queued row
-- of the queue (13,000 rows, 22 ms a lease, against 0.3 ms for the index walk;
-- docs/performance.md). Here the pick runs with sorts disabled, so the only
-- plan left without a sort is the walk of the index whose equality columns and
-- order match the pick's: svc_jobs_ready (queue, priority desc, id) for a
-- caller of any tenant, svc_jobs_ready_tenant (tenant_id, queue, priority
-- desc, id) for a tenant-bound one. PL/pgSQL keeps each branch's plan for the
-- session, as a prepared statement would; a `set` clause applies while the
-- function runs (planning included) and nowhere else.
--
-- Called once per queue by the lease statement (runtime/jobs/plane.ts). It
-- runs on its own snapshot (a volatile function in read committed): a job it
-- picks that the lease's own snapshot cannot see is locked, not leased, and
-- stays queued, as a picked row updated meanwhile already did.
-- step 1 transactional: add function svc_jobs_pick
create function svc_jobs_pick(p_queue text, p_tenant text, p_limit int)
  returns table (id text, priority int, row_ctid tid)
  language plpgsql volatile
  set enable_sort = off
  set enable_incremental_sort = off
as $$
begin
  if p_tenant is null then
    return query
      select j.id, j.priority, j.ctid from svc_jobs j
       where j.status = 'queued' and j.queue = p_queue and j.visible_at <= now()
       order by j.priority desc, j.id
       limit p_limit
       for update skip locked;
  else
    return query
      select j.id, j.priority, j.ctid from svc_jobs j
       where j.status = 'queued' and j.queue = p_queue and j.visible_at <= now() and j.tenant_id = p_tenant
       order by j.priority desc, j.id
       limit p_limit
       for update skip locked;
  end if;
end $$;
