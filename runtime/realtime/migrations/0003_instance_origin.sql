-- svc-gen runtime: where each registered instance runs, for the operator's
-- list of instances (GET /meta/instances, the console's overview): the host
-- name and process id it registered with. Nullable, no default: adding them
-- is a catalog change, and an instance of an older build keeps registering
-- without them (its row shows no host until it is replaced).
-- step 1 transactional: add host and pid to svc_realtime_instances
alter table svc_realtime_instances add column host text;
alter table svc_realtime_instances add column pid integer;
