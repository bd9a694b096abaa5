-- svc-gen runtime: the audit id stays unique when several Citus nodes make
-- ids (ADR 025, "The audit id"). 0005's id is the millisecond shifted left by
-- 22 bits, plus the low 22 bits of the sequence svc_audit_id_low. Citus keeps
-- a bigint sequence unique across nodes by giving each node group its own
-- range, (group << 48) + 1 up to ((group + 1) << 48): ranges that differ above
-- bit 48 only, so their low 22 bits repeat on every node, and two nodes could
-- make the same id in the same millisecond. The low 22 bits now hold the
-- node's range (the sequence value's bits 48..53: 0 on one Postgres and on
-- the coordinator) in their top 6 bits and the sequence's low 16 bits below:
-- ids of two nodes never meet, one node makes up to 65,536 ids a millisecond
-- before its low bits repeat, and the millisecond stays above them all, so id
-- order is still time order (the routes' cursors, the statistics' fold).
-- `svc_audit_id_of` is the layout alone, immutable: the tests check it.
-- step 1 transactional: svc_audit_next_id() folds the sequence's node range into the id's low bits
create or replace function svc_audit_id_of(ms bigint, s bigint) returns bigint
language sql immutable as $$
  select ((ms - 1577836800000) << 22) | (((s >> 48) & 63) << 16) | (s & 65535)
$$;
create or replace function svc_audit_next_id() returns bigint
language sql volatile as $$
  select svc_audit_id_of(floor(extract(epoch from clock_timestamp()) * 1000)::bigint, nextval('svc_audit_id_low'))
$$;
