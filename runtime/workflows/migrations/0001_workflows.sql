-- svc-gen runtime: durable workflow runs (CONTRACT section 12, ADR 015), their
-- step records, and one row per scheduled workflow that decides each tick.

create table svc_workflow_runs (
  id text primary key,
  workflow text not null,
  -- The definition the run started with (the IR's WorkflowDef as JSON): a
  -- schema change never alters a run in flight.
  definition jsonb not null,
  status text not null check (status in ('running', 'waiting', 'succeeded', 'failed')),
  tenant_id text,
  -- What started it: {kind, model?, event?, eventId?, record?, old?, input?, scheduledFor?}.
  trigger jsonb not null,
  -- The person (or worker's actor) whose write or request started it: {id, role, tenantId}; null for a schedule.
  actor jsonb,
  -- Automated hops that led to the run (a workflow's own write starting another counts one).
  depth integer not null default 0,
  vars jsonb not null default '{}'::jsonb,
  -- Position of the first unfinished step; equal to the step count once finished.
  position integer not null default 0,
  error text,
  -- The trigger's event: a write starts a workflow at most once.
  event_id text,
  -- A schedule's tick: a tick starts a workflow at most once, whatever the instances.
  scheduled_for timestamptz,
  created_by text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  finished_at timestamptz
);
create unique index svc_workflow_runs_event on svc_workflow_runs (workflow, event_id) where event_id is not null;
create unique index svc_workflow_runs_tick on svc_workflow_runs (workflow, scheduled_for) where scheduled_for is not null;
-- Newest first within a scope (GET /workflows/runs); ids are ULIDs.
create index svc_workflow_runs_recent on svc_workflow_runs (tenant_id, id desc);

-- One row per started step. A step's outcome is written before the next
-- step starts, in the transaction that enqueues the next advance.
create table svc_workflow_steps (
  run_id text not null references svc_workflow_runs (id) on delete cascade,
  position integer not null,
  step_id text not null,
  status text not null check (status in ('running', 'waiting', 'succeeded', 'failed', 'skipped')),
  attempts integer not null default 0,
  output jsonb,
  error text,
  -- A job step's job (its outcome resumes the run).
  job_id text,
  -- A delay's end, or when a failed attempt is retried.
  wake_at timestamptz,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  primary key (run_id, position)
);
-- The awaits consumer: which waiting step a finished job resumes.
create index svc_workflow_steps_job on svc_workflow_steps (job_id) where job_id is not null;

-- One row per scheduled workflow. An instance fires a tick by moving
-- next_at from the tick it read to the following one (compare-and-set): of
-- several instances exactly one succeeds.
create table svc_workflow_schedules (
  workflow text primary key,
  cron text not null,
  timezone text not null,
  next_at timestamptz not null,
  last_fired_at timestamptz,
  updated_at timestamptz not null default now()
);
