-- A hand-made layout 3 (/work LAYOUT.md, ADR 025 decisions 1-3) of the
-- runtime's tables and the CRM fixture's, on empty tables, written from the
-- layout's text rather than by the generator or the runtime: it proves the
-- Citus stub (test/helpers/citus-stub.sql) and the distribution migration of
-- `--target citus` before the layout branches land (test/db/citus-rules.test.ts).

-- svc_events, svc_changes: keyed (tenant_id, seq); id unique per tenant; seq and tx keep their defaults (the waiver).
alter table svc_events alter column tenant_id set not null;
alter table svc_events drop constraint svc_events_pkey, add primary key (tenant_id, seq);
alter table svc_events drop constraint svc_events_id_key, add constraint svc_events_id_key unique (tenant_id, id);
alter table svc_events drop constraint svc_events_stream_version,
  add constraint svc_events_stream_version unique (tenant_id, stream_type, stream_id, version);
alter table svc_changes alter column tenant_id set not null;
alter table svc_changes drop constraint svc_changes_pkey, add primary key (tenant_id, seq);
alter table svc_changes drop constraint svc_changes_id_key, add constraint svc_changes_id_key unique (tenant_id, id);

-- svc_audit: a ULID made by the service instead of an identity.
alter table svc_audit alter column id drop identity;
alter table svc_audit alter column id type text;
alter table svc_audit alter column tenant_id set not null;
alter table svc_audit drop constraint svc_audit_pkey, add primary key (tenant_id, id);

-- svc_media, svc_media_blobs
alter table svc_media alter column tenant_id set not null;
alter table svc_media drop constraint svc_media_pkey, add primary key (tenant_id, id);
alter table svc_media_blobs alter column tenant_id set not null;
drop index svc_media_blobs_content;
create unique index svc_media_blobs_content on svc_media_blobs (tenant_id, sha256);

-- The CRM's model tables: relation keys first (they depend on the old primary keys).
alter table activity drop constraint activity_contact_id_fkey, drop constraint activity_deal_id_fkey;
alter table contact drop constraint contact_company_id_fkey;
alter table deal drop constraint deal_company_id_fkey, drop constraint deal_contact_id_fkey;
alter table line_item drop constraint line_item_deal_id_fkey, drop constraint line_item_product_id_fkey;
alter table note drop constraint note_contact_id_fkey;
alter table ticket drop constraint ticket_company_id_fkey;

alter table activity alter column tenant_id set not null, drop constraint activity_pkey, add primary key (tenant_id, id);
alter table company alter column tenant_id set not null, drop constraint company_pkey, add primary key (tenant_id, id);
alter table contact alter column tenant_id set not null, drop constraint contact_pkey, add primary key (tenant_id, id);
alter table deal alter column tenant_id set not null, drop constraint deal_pkey, add primary key (tenant_id, id);
alter table line_item alter column tenant_id set not null, drop constraint line_item_pkey, add primary key (tenant_id, id);
alter table note alter column tenant_id set not null, drop constraint note_pkey, add primary key (tenant_id, id);
alter table product alter column tenant_id set not null, drop constraint product_pkey, add primary key (tenant_id, id);
alter table ticket alter column tenant_id set not null, drop constraint ticket_pkey, add primary key (tenant_id, id);

alter table activity add constraint activity_contact_id_fkey foreign key (tenant_id, contact_id) references contact (tenant_id, id) on delete set null (contact_id);
alter table activity add constraint activity_deal_id_fkey foreign key (tenant_id, deal_id) references deal (tenant_id, id) on delete set null (deal_id);
alter table contact add constraint contact_company_id_fkey foreign key (tenant_id, company_id) references company (tenant_id, id) on delete set null (company_id);
alter table deal add constraint deal_company_id_fkey foreign key (tenant_id, company_id) references company (tenant_id, id) on delete restrict;
alter table deal add constraint deal_contact_id_fkey foreign key (tenant_id, contact_id) references contact (tenant_id, id) on delete set null (contact_id);
alter table line_item add constraint line_item_deal_id_fkey foreign key (tenant_id, deal_id) references deal (tenant_id, id) on delete restrict;
alter table line_item add constraint line_item_product_id_fkey foreign key (tenant_id, product_id) references product (tenant_id, id) on delete restrict;
alter table note add constraint note_contact_id_fkey foreign key (tenant_id, contact_id) references contact (tenant_id, id) on delete restrict;
alter table ticket add constraint ticket_company_id_fkey foreign key (tenant_id, company_id) references company (tenant_id, id) on delete set null (company_id);
