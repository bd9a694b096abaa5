-- svc-gen runtime: GET /workflows/runs?status= (ADR 022). Without a status the
-- list walks svc_workflow_runs_recent (tenant_id, id desc); with one, a rare
-- status (running, waiting, failed) would walk every finished run of the scope.
-- step 1 online: add index svc_workflow_runs_status on svc_workflow_runs (tenant_id, status, id)
create index concurrently if not exists svc_workflow_runs_status on svc_workflow_runs (tenant_id, status, id);
