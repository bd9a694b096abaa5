-- svc-gen runtime: periodic tasks (runtime/core/periodic.ts). The last tick
-- (floor of the database clock's epoch milliseconds over the task's period)
-- each named task ran at: the instance whose update moves it runs the tick,
-- so a task runs once per tick across all instances.
create table svc_periodic (
  name text primary key,
  last_tick bigint not null
);
