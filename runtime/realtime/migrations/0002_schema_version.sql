-- svc-gen runtime: the registry of instances carries what the contract gate of
-- the migration runner needs (docs/adr/019-online-migrations.md): the newest
-- schema migration of the instance's build, and how long it counts as live
-- after its last heartbeat.

alter table svc_realtime_instances add column schema_migration text;
alter table svc_realtime_instances add column ttl_ms integer;
