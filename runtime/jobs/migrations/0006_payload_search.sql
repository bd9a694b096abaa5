-- svc-gen runtime: the operator's search by payload field (GET /jobs/search
-- and POST /jobs/bulk with `filter.payload`, matched by containment,
-- `payload @> {...}`), through an index instead of a walk of svc_jobs.
-- jsonb_path_ops: one hashed entry per path and value, the smallest GIN
-- opclass, serving `@>` only (the only operator the search uses). Measured on
-- 1M jobs (docs/adr/023-console.md, bench/console/payload.ts): a search for a
-- rare value fell from seconds to tens of ms; the index is about 15% of the
-- table's size. Built online: `create index concurrently`, one step.
-- step 1 online: add index svc_jobs_payload on svc_jobs using gin (payload jsonb_path_ops)
create index concurrently if not exists svc_jobs_payload on svc_jobs using gin (payload jsonb_path_ops);
