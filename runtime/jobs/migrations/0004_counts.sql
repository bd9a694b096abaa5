-- svc-gen runtime: job counts per scope, queue and status, kept by the writes
-- themselves (ADR 022), so that GET /jobs/stats and the svc_jobs gauge read a
-- few rows instead of counting every job the table holds.
--
-- Every statement that inserts, updates or deletes jobs appends its net change
-- per (tenant, queue, status) to svc_job_count_deltas, in its own transaction:
-- appends only, so concurrent writers never wait on a shared counter row. A
-- periodic fold (runtime/jobs/counts.ts, one instance at a time) moves the
-- deltas into svc_job_counts. A count is the sum of both, read in one snapshot.
-- step 1 transactional: the counters, the deltas and the statement triggers that append them
create table svc_job_counts (
  tenant_id text,
  queue text not null,
  status text not null,
  n bigint not null,
  constraint svc_job_counts_key unique nulls not distinct (tenant_id, queue, status)
);

create table svc_job_count_deltas (
  tenant_id text,
  queue text not null,
  status text not null,
  n bigint not null
);

-- One row per changed (tenant, queue, status) of the statement; none for a
-- statement that changed no status (heartbeat, progress, an empty lease).
create function svc_job_count_changes() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into svc_job_count_deltas (tenant_id, queue, status, n)
      select tenant_id, queue, status, count(*) from svc_new_jobs group by 1, 2, 3;
  elsif tg_op = 'DELETE' then
    insert into svc_job_count_deltas (tenant_id, queue, status, n)
      select tenant_id, queue, status, -count(*) from svc_old_jobs group by 1, 2, 3;
  else
    insert into svc_job_count_deltas (tenant_id, queue, status, n)
      select tenant_id, queue, status, sum(d) from (
        select tenant_id, queue, status, 1 as d from svc_new_jobs
        union all select tenant_id, queue, status, -1 from svc_old_jobs) changed
       group by 1, 2, 3 having sum(d) <> 0;
  end if;
  return null;
end $$;

create trigger svc_jobs_count_insert after insert on svc_jobs
  referencing new table as svc_new_jobs for each statement execute function svc_job_count_changes();
create trigger svc_jobs_count_update after update on svc_jobs
  referencing old table as svc_old_jobs new table as svc_new_jobs for each statement execute function svc_job_count_changes();
create trigger svc_jobs_count_delete after delete on svc_jobs
  referencing old table as svc_old_jobs for each statement execute function svc_job_count_changes();

-- `truncate svc_jobs` (an operator's reset) fires no delete trigger: it empties
-- the counts too, under the fold's lock (LOCK_KEYS.jobCountsFold in
-- runtime/db/locks.ts) so that a fold in flight cannot write them back.
create function svc_job_counts_reset() returns trigger language plpgsql as $$
begin
  perform pg_advisory_xact_lock(7305648312042);
  delete from svc_job_count_deltas;
  delete from svc_job_counts;
  return null;
end $$;

create trigger svc_jobs_count_truncate after truncate on svc_jobs
  for each statement execute function svc_job_counts_reset();

-- step 2 transactional: count the jobs already there, once
-- One statement, one snapshot: the count sees every write committed before it,
-- and the deltas it removes are exactly those writes' (the triggers exist since
-- the first step, whose lock waited for every writer without them); later
-- deltas stay. It reads every job once (2.4 s at 1M jobs) and blocks no writer,
-- so it may outlast the step's statement timeout.
set local statement_timeout = 0;
with counted_already as (delete from svc_job_count_deltas returning 1)
insert into svc_job_counts (tenant_id, queue, status, n)
select tenant_id, queue, status, count(*) from svc_jobs group by 1, 2, 3;
