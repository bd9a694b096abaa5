-- svc-gen runtime: the event log and the change log in layout 3 (ADR 025,
-- issue 30): distributable by tenant_id. The global scope's tenant, null
-- until now, becomes the empty string '' (the API still answers
-- tenantId: null), tenant_id becomes NOT NULL without a default (the runtime
-- always writes it), and every key leads with it:
--   svc_events:  primary key (tenant_id, seq), unique (tenant_id, id),
--                unique (tenant_id, stream_type, stream_id, version)
--                (svc_events_stream_version, the name the jobs plane's
--                version-race retry reads), a plain index on id (the feed
--                finds an event's position by its id alone);
--   svc_changes: primary key (tenant_id, seq), unique (tenant_id, id), a plain
--                index on id.
-- Online, as a generated migration on a busy table (docs/migrations.md): the
-- nulls are filled in keyset batches, NOT NULL goes through a check added
-- `not valid` and validated, each new key is built `concurrently`, and the
-- keys are swapped in one short transactional step (catalog work only: the
-- columns are NOT NULL already, so the primary key needs no scan).
-- seq and tx keep their defaults (nextval, pg_current_xact_id): the one-node
-- feed (ADR 025 decision 4).
-- step 1 backfill "svc_events": the global scope's events get the tenant ''
update svc_events set tenant_id = '' where tenant_id is null;
-- step 2 backfill "svc_changes": the global scope's changes get the tenant ''
update svc_changes set tenant_id = '' where tenant_id is null;
-- step 3 transactional: check svc_events.tenant_id and svc_changes.tenant_id are not null, for new rows only
alter table svc_events add constraint svc_events_tenant_notnull check (tenant_id is not null) not valid;
alter table svc_changes add constraint svc_changes_tenant_notnull check (tenant_id is not null) not valid;
-- step 4 online: validate svc_events.tenant_id is not null
alter table svc_events validate constraint svc_events_tenant_notnull;
-- step 5 online: validate svc_changes.tenant_id is not null
alter table svc_changes validate constraint svc_changes_tenant_notnull;
-- step 6 transactional: set svc_events.tenant_id and svc_changes.tenant_id not null (the validated checks spare the scan) and drop the checks
alter table svc_events alter column tenant_id set not null;
alter table svc_events drop constraint svc_events_tenant_notnull;
alter table svc_changes alter column tenant_id set not null;
alter table svc_changes drop constraint svc_changes_tenant_notnull;
-- step 7 online: add unique index svc_events_tenant_seq on svc_events (tenant_id, seq), the new primary key
create unique index concurrently if not exists svc_events_tenant_seq on svc_events (tenant_id, seq);
-- step 8 online: add unique index svc_events_tenant_event on svc_events (tenant_id, id)
create unique index concurrently if not exists svc_events_tenant_event on svc_events (tenant_id, id);
-- step 9 online: add index svc_events_event on svc_events (id), for the feed's lookup of an event by id
create index concurrently if not exists svc_events_event on svc_events (id);
-- step 10 online: add unique index svc_events_tenant_stream_version on svc_events (tenant_id, stream_type, stream_id, version)
create unique index concurrently if not exists svc_events_tenant_stream_version on svc_events (tenant_id, stream_type, stream_id, version);
-- step 11 transactional: svc_events' keys lead with tenant_id: primary key (tenant_id, seq), stream version unique per tenant, id unique per tenant
alter table svc_events drop constraint svc_events_pkey,
  add constraint svc_events_pkey primary key using index svc_events_tenant_seq;
alter table svc_events drop constraint svc_events_stream_version,
  add constraint svc_events_stream_version unique using index svc_events_tenant_stream_version;
alter table svc_events drop constraint svc_events_id_key;
-- step 12 online: add unique index svc_changes_tenant_seq on svc_changes (tenant_id, seq), the new primary key
create unique index concurrently if not exists svc_changes_tenant_seq on svc_changes (tenant_id, seq);
-- step 13 online: add unique index svc_changes_tenant_change on svc_changes (tenant_id, id)
create unique index concurrently if not exists svc_changes_tenant_change on svc_changes (tenant_id, id);
-- step 14 online: add index svc_changes_change on svc_changes (id), for the feed's lookup of a change by id
create index concurrently if not exists svc_changes_change on svc_changes (id);
-- step 15 transactional: svc_changes' keys lead with tenant_id: primary key (tenant_id, seq), id unique per tenant
alter table svc_changes drop constraint svc_changes_pkey,
  add constraint svc_changes_pkey primary key using index svc_changes_tenant_seq;
alter table svc_changes drop constraint svc_changes_id_key;
