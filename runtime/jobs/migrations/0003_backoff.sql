-- The retry backoff, in one place: the delay in seconds before a retryable
-- failure of attempt number `attempts` runs again,
--
--   max(1, floor(min(3600, 2^attempts) * jitter)),  jitter uniform in [0.5, 1)
--
-- exponential so a failing dependency is not hammered, capped at an hour, and
-- jittered (the caller draws it) so jobs that failed together do not retry
-- together. Every statement that schedules a retry calls it (the worker
-- plane's fail, the workflow engine's step retry); nothing else computes it.
-- A one-select SQL function: the planner inlines it into the statement.
create function svc_job_backoff_secs(attempts int, jitter float8) returns int
  language sql immutable parallel safe
  as $$ select greatest(1, floor(least(3600, power(2, attempts)) * jitter))::int $$;
