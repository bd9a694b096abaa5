-- svc-gen runtime: the audit entry's id is written by the runtime, no longer
-- drawn from an identity (ADR 025, issue 30: no identity or sequence whose
-- order anything relies on; on Citus an identity hands out per-node ranges).
-- Every insert of the runtime writes `svc_audit_next_id()`: the milliseconds since
-- 2020-01-01 UTC of the database's clock (clock_timestamp(), evaluated inside
-- the writing transaction, so never before its start), shifted left by 22
-- bits, plus the low 22 bits of a sequence that only keeps two ids of one
-- millisecond apart (nothing relies on its order). Ids stay bigint: no
-- rewrite of the table; the identity's ids (small numbers) sort before every
-- new one, so id order stays time order and the routes' cursors stay valid.
-- The statistics' fold no longer needs the identity's marks: an entry not yet
-- committed has an id at or above the id of the start of the oldest open
-- transaction (runtime/audit/rollup.ts).
-- The runtime writes the id in every insert; the column's default is the same
-- function only for instances of earlier builds, which leave the id to the
-- identity: with it their audited writes go on during a rolling deploy. `svc-gen
-- build --target citus` drops that default before it distributes the table
-- (on Citus a default drawing on a sequence is the coordinator's: ADR 025).
-- step 1 transactional: svc_audit.id: drop the identity; svc_audit_next_id() makes the runtime's time-ordered ids (and, for earlier builds' instances, the default); the fold's marks go
create sequence if not exists svc_audit_id_low as bigint;
create or replace function svc_audit_next_id() returns bigint
language sql volatile as $$
  select ((floor(extract(epoch from clock_timestamp()) * 1000)::bigint - 1577836800000) << 22)
         | (nextval('svc_audit_id_low') & 4194303)
$$;
alter table svc_audit alter column id drop identity if exists;
alter table svc_audit alter column id set default svc_audit_next_id();
alter table svc_audit_rollup_state drop column if exists marks_id, drop column if exists marks_at;
