-- A hand-made layout 3 (ADR 025 decisions 1-3) of the runtime's tables and
-- the CRM fixture's, on empty tables, written from the layout's text rather
-- than by the generator or the runtime: it proves the Citus stub
-- (test/helpers/citus-stub.sql) and the distribution migration of
-- `--target citus` independently of them (test/db/citus-rules.test.ts).
-- Written to hold whether the tables it starts from are layout 2 or already
-- layout 3 (`if exists`, keys dropped with what depends on them and re-made).

-- svc_events, svc_changes: keyed (tenant_id, seq); id unique per tenant; seq and tx keep their defaults (the waiver).
alter table svc_events alter column tenant_id set not null;
alter table svc_events drop constraint if exists svc_events_pkey cascade, add primary key (tenant_id, seq);
alter table svc_events drop constraint if exists svc_events_id_key, add constraint svc_events_id_key unique (tenant_id, id);
alter table svc_events drop constraint if exists svc_events_stream_version,
  add constraint svc_events_stream_version unique (tenant_id, stream_type, stream_id, version);
alter table svc_changes alter column tenant_id set not null;
alter table svc_changes drop constraint if exists svc_changes_pkey cascade, add primary key (tenant_id, seq);
alter table svc_changes drop constraint if exists svc_changes_id_key, add constraint svc_changes_id_key unique (tenant_id, id);

-- svc_audit: a ULID made by the service instead of an identity (the runtime's own, since audit
-- migration 0005, is a time-ordered bigint it writes: no identity either).
alter table svc_audit alter column id drop identity if exists;
alter table svc_audit alter column id type text;
alter table svc_audit alter column tenant_id set not null;
alter table svc_audit drop constraint if exists svc_audit_pkey cascade, add primary key (tenant_id, id);

-- svc_media, svc_media_blobs
alter table svc_media alter column tenant_id set not null;
alter table svc_media drop constraint if exists svc_media_pkey cascade, add primary key (tenant_id, id);
alter table svc_media_blobs alter column tenant_id set not null;
drop index if exists svc_media_blobs_content;
create unique index svc_media_blobs_content on svc_media_blobs (tenant_id, sha256);

-- The CRM's model tables: relation keys first (they depend on the old primary keys).
alter table activity drop constraint if exists activity_contact_id_fkey, drop constraint if exists activity_deal_id_fkey;
alter table contact drop constraint if exists contact_company_id_fkey;
alter table deal drop constraint if exists deal_company_id_fkey, drop constraint if exists deal_contact_id_fkey;
alter table line_item drop constraint if exists line_item_deal_id_fkey, drop constraint if exists line_item_product_id_fkey;
alter table note drop constraint if exists note_contact_id_fkey;
alter table ticket drop constraint if exists ticket_company_id_fkey;

alter table activity alter column tenant_id set not null, drop constraint if exists activity_pkey cascade, add primary key (tenant_id, id);
alter table company alter column tenant_id set not null, drop constraint if exists company_pkey cascade, add primary key (tenant_id, id);
alter table contact alter column tenant_id set not null, drop constraint if exists contact_pkey cascade, add primary key (tenant_id, id);
alter table deal alter column tenant_id set not null, drop constraint if exists deal_pkey cascade, add primary key (tenant_id, id);
alter table line_item alter column tenant_id set not null, drop constraint if exists line_item_pkey cascade, add primary key (tenant_id, id);
alter table note alter column tenant_id set not null, drop constraint if exists note_pkey cascade, add primary key (tenant_id, id);
alter table product alter column tenant_id set not null, drop constraint if exists product_pkey cascade, add primary key (tenant_id, id);
alter table ticket alter column tenant_id set not null, drop constraint if exists ticket_pkey cascade, add primary key (tenant_id, id);

alter table activity add constraint activity_contact_id_fkey foreign key (tenant_id, contact_id) references contact (tenant_id, id) on delete no action;
alter table activity add constraint activity_deal_id_fkey foreign key (tenant_id, deal_id) references deal (tenant_id, id) on delete no action;
alter table contact add constraint contact_company_id_fkey foreign key (tenant_id, company_id) references company (tenant_id, id) on delete no action;
alter table deal add constraint deal_company_id_fkey foreign key (tenant_id, company_id) references company (tenant_id, id) on delete restrict;
alter table deal add constraint deal_contact_id_fkey foreign key (tenant_id, contact_id) references contact (tenant_id, id) on delete no action;
alter table line_item add constraint line_item_deal_id_fkey foreign key (tenant_id, deal_id) references deal (tenant_id, id) on delete restrict;
alter table line_item add constraint line_item_product_id_fkey foreign key (tenant_id, product_id) references product (tenant_id, id) on delete restrict;
alter table note add constraint note_contact_id_fkey foreign key (tenant_id, contact_id) references contact (tenant_id, id) on delete restrict;
alter table ticket add constraint ticket_company_id_fkey foreign key (tenant_id, company_id) references company (tenant_id, id) on delete no action;
