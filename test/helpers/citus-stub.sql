-- Citus's distribution functions on plain Postgres, for the tests (ADR 025):
-- no Citus package exists for this machine, so these stand in for
-- `create_reference_table` and `create_distributed_table` and REFUSE, with
-- the rule in the message, what Citus would refuse, plus the rules the
-- layout keeps for Citus's sake. They move no row: a distributed table stays
-- an ordinary table, recorded in `pg_dist_partition`, which mimics Citus's
-- catalog (`partmethod` 'h' distributed by hash, 'n' reference) so that the
-- generated migration's guard (`where not exists (select from
-- pg_dist_partition ...)`) reads the same on both.
--
-- Rules checked by create_distributed_table(t, column, colocate_with):
--   1. the distribution column exists and is NOT NULL;
--   2. every primary key, unique constraint and unique index has it as a
--      plain key column (an expression such as coalesce(tenant_id, '') does
--      not count);
--   3. every foreign key from t goes to a reference table, or to a
--      distributed table co-located with t (or t itself) and holds the
--      distribution column on both sides at the same position; a key that
--      holds the distribution column has no `on delete set null` / `set
--      default` (even Postgres 15's `set null (x_id)`, which never touches
--      it: Citus's EnsureSupportedFKeyOnDistKey, commands/foreign_constraint.c,
--      looks at the action, not its column list; citusdata/citus#7132) and no
--      `on update set null / set default / cascade`;
--   4. order: the referenced table is already distributed or a reference
--      table; a reference table never references t;
--   5. no column default draws on the node (nextval, identity,
--      pg_current_xact_id, txid_current), except svc_events' and
--      svc_changes' seq and tx: the single-node feed, never read on Citus
--      (ADR 025 decision 4). (svc_audit's id: the runtime writes a
--      time-ordered id since audit migration 0005, whose default
--      svc_audit_next_id() for earlier builds' instances the citus target
--      drops before it distributes the table.)
-- create_reference_table(t): its foreign keys go to reference tables only.
--
-- Once a table is placed, Citus checks again what later DDL adds to it
-- (ErrorIfUnsupportedAlterAddConstraintStmt runs create_distributed_table's
-- constraint checks on ALTER TABLE ... ADD CONSTRAINT; an index on a
-- distributed table must hold the distribution column): an event trigger at
-- the end of every ALTER TABLE and CREATE INDEX on a table of
-- pg_dist_partition runs rules 2 and 3 again (a distributed table) or the
-- reference table's rule. So a foreign key added from a distributed table to
-- a table not yet distributed is refused, as Citus refuses it ("referenced
-- table ... must be a distributed table or a reference table"). A key added
-- from a plain (local) table to a distributed one is not refused: Citus
-- accepts it (its legacy behaviour: the key checks the coordinator's empty
-- shell table), and create_distributed_table of the local table later checks
-- it (rule 3). A dropped table leaves pg_dist_partition, as with Citus.


create table if not exists pg_dist_partition (
  logicalrelid regclass primary key,
  partmethod "char" not null check (partmethod in ('h', 'n')),
  partkey text,
  colocationid integer not null
);

create or replace function citus_stub_refuse(t regclass, rule text) returns void
language plpgsql as $$
begin
  raise exception 'citus rule: %: %', t, rule using errcode = '0A000';
end $$;

-- The reference table's rule: its foreign keys go to reference tables only.
create or replace function citus_stub_check_reference_keys(table_name regclass) returns void
language plpgsql as $$
declare
  fk record;
begin
  for fk in
    select c.conname, c.confrelid::regclass as target, p.partmethod
      from pg_constraint c left join pg_dist_partition p on p.logicalrelid = c.confrelid
     where c.conrelid = table_name and c.contype = 'f' and c.confrelid <> c.conrelid
  loop
    if fk.partmethod is distinct from 'n' then
      perform citus_stub_refuse(table_name, format(
        'foreign key %s references %s, which is not a reference table (yet): a reference table references reference tables only, created first',
        fk.conname, fk.target));
    end if;
  end loop;
end $$;

create or replace function create_reference_table(table_name regclass) returns void
language plpgsql as $$
begin
  if exists (select from pg_dist_partition where logicalrelid = table_name) then
    perform citus_stub_refuse(table_name, 'the table is already distributed');
  end if;
  perform citus_stub_check_reference_keys(table_name);
  insert into pg_dist_partition (logicalrelid, partmethod, partkey, colocationid) values (table_name, 'n', null, 0);
end $$;

-- Rule 2: every unique index of the table holds the distribution column as a plain key column.
create or replace function citus_stub_check_unique_keys(table_name regclass, distribution_column text) returns void
language plpgsql as $$
declare
  col_num smallint;
  ix record;
begin
  select attnum into col_num from pg_attribute
   where attrelid = table_name and attname = distribution_column and attnum > 0 and not attisdropped;
  for ix in
    select i.indexrelid::regclass as name, (string_to_array(i.indkey::text, ' ')::int2[])[1:i.indnkeyatts] as keys
      from pg_index i where i.indrelid = table_name and i.indisunique
  loop
    if not (col_num = any (ix.keys)) then
      perform citus_stub_refuse(table_name, format(
        'unique index %s does not hold the distribution column %s as a plain key column (an expression such as coalesce(%s, '''') does not count)',
        ix.name, distribution_column, distribution_column));
    end if;
  end loop;
end $$;

-- Rule 3 and the order of rule 4: every foreign key from the table (distributed by
-- distribution_column, in co-location group group_id) goes to a reference table, or
-- to a distributed table of its group (or itself) with the distribution column at
-- the same position on both sides. `colocation` names the group in messages.
create or replace function citus_stub_check_foreign_keys(table_name regclass, distribution_column text, group_id integer, colocation text)
returns void
language plpgsql as $$
declare
  col_num smallint;
  fk record;
  target_col smallint;
  pos integer;
begin
  select attnum into col_num from pg_attribute
   where attrelid = table_name and attname = distribution_column and attnum > 0 and not attisdropped;
  for fk in
    select c.conname, c.confrelid, c.confrelid::regclass as target, c.conkey, c.confkey, c.confdeltype, c.confupdtype,
           p.partmethod, p.partkey, p.colocationid
      from pg_constraint c left join pg_dist_partition p on p.logicalrelid = c.confrelid
     where c.conrelid = table_name and c.contype = 'f'
  loop
    -- Citus checks the actions of a key holding the distribution column first, whatever it references.
    if col_num = any (fk.conkey) and fk.confdeltype in ('n', 'd') then
      perform citus_stub_refuse(table_name, format(
        'foreign key %s holds the distribution column %s and is on delete set %s: Citus refuses SET NULL and SET DEFAULT in ON DELETE when the key includes the distribution column (even with a column list); use no action or restrict',
        fk.conname, distribution_column, case fk.confdeltype when 'n' then 'null' else 'default' end));
    end if;
    if col_num = any (fk.conkey) and fk.confupdtype in ('n', 'd', 'c') then
      perform citus_stub_refuse(table_name, format(
        'foreign key %s holds the distribution column %s and has an ON UPDATE action (set null, set default or cascade), which Citus refuses on such a key',
        fk.conname, distribution_column));
    end if;
    if fk.confrelid = table_name::oid then
      target_col := col_num;
    elsif fk.partmethod = 'n' then
      continue;
    elsif fk.partmethod is null then
      perform citus_stub_refuse(table_name, format(
        'foreign key %s references %s, which is neither distributed nor a reference table yet: distribute %s first',
        fk.conname, fk.target, fk.target));
    elsif fk.colocationid <> group_id then
      perform citus_stub_refuse(table_name, format(
        'foreign key %s references %s, which is not co-located with it (%s)', fk.conname, fk.target, colocation));
    else
      select a.attnum into target_col from pg_attribute a where a.attrelid = fk.confrelid and a.attname = fk.partkey;
    end if;
    pos := array_position(fk.conkey, col_num);
    if pos is null or fk.confkey[pos] is distinct from target_col then
      perform citus_stub_refuse(table_name, format(
        'foreign key %s to %s does not hold the distribution column on both sides at the same position (write (%s, x_id) references %s (%s, id))',
        fk.conname, fk.target, distribution_column, fk.target, distribution_column));
    end if;
  end loop;
end $$;

create or replace function create_distributed_table(table_name regclass, distribution_column text, colocate_with text default 'default')
returns void
language plpgsql as $$
declare
  col pg_attribute%rowtype;
  group_id integer;
  fk record;
  def record;
begin
  if exists (select from pg_dist_partition where logicalrelid = table_name) then
    perform citus_stub_refuse(table_name, 'the table is already distributed');
  end if;

  -- 1. the column
  select * into col from pg_attribute
   where attrelid = table_name and attname = distribution_column and attnum > 0 and not attisdropped;
  if not found then
    perform citus_stub_refuse(table_name, format('the distribution column %s does not exist', distribution_column));
  end if;
  if not col.attnotnull then
    perform citus_stub_refuse(table_name, format('the distribution column %s is nullable: it must be NOT NULL', distribution_column));
  end if;

  -- the co-location group
  if colocate_with = 'default' then
    group_id := 1;
  elsif colocate_with = 'none' then
    group_id := greatest(1, coalesce((select max(colocationid) from pg_dist_partition), 0)) + 1;
  else
    select p.colocationid into group_id from pg_dist_partition p
     where p.logicalrelid = to_regclass(colocate_with) and p.partmethod = 'h';
    if group_id is null then
      perform citus_stub_refuse(table_name, format('colocate_with %s is not a distributed table (yet)', colocate_with));
    end if;
  end if;

  -- 2. keys and uniques
  perform citus_stub_check_unique_keys(table_name, distribution_column);

  -- 3 and 4. foreign keys from the table
  perform citus_stub_check_foreign_keys(table_name, distribution_column, group_id, format('colocate_with %s', colocate_with));

  -- 4. a reference table never references a distributed one
  for fk in
    select c.conname, c.conrelid::regclass as source from pg_constraint c join pg_dist_partition p on p.logicalrelid = c.conrelid
     where c.confrelid = table_name and c.contype = 'f' and p.partmethod = 'n'
  loop
    perform citus_stub_refuse(table_name, format('reference table %s references it (foreign key %s)', fk.source, fk.conname));
  end loop;

  -- 5. defaults that draw on the node
  for def in
    select a.attname, a.attidentity, pg_get_expr(d.adbin, d.adrelid) as expr
      from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
     where a.attrelid = table_name and a.attnum > 0 and not a.attisdropped and (d.adbin is not null or a.attidentity <> '')
  loop
    if (def.attidentity <> '' or def.expr ~* '\m(nextval|pg_current_xact_id|txid_current|svc_audit_next_id)\s*\(')
       and not (table_name::text in ('svc_events', 'svc_changes') and def.attname in ('seq', 'tx')) then
      perform citus_stub_refuse(table_name, format(
        'column %s defaults to %s, evaluated on the coordinator (a sequence or transaction id is per node): the service must write the value',
        def.attname, case when def.attidentity <> '' then 'an identity' else def.expr end));
    end if;
  end loop;

  insert into pg_dist_partition (logicalrelid, partmethod, partkey, colocationid)
  values (table_name, 'h', distribution_column, group_id);
end $$;

-- Later DDL on a placed table (an index: its table): what ALTER TABLE and CREATE
-- INDEX leave on it must still pass its placement's rules. Citus checks before the
-- statement runs, the stub at its end, in its transaction: a refusal undoes it.
create or replace function citus_stub_after_ddl() returns event_trigger
language plpgsql as $$
declare
  placed record;
begin
  for placed in
    select distinct p.logicalrelid, p.partmethod, p.partkey, p.colocationid
      from pg_event_trigger_ddl_commands() cmd
      left join pg_index i on i.indexrelid = cmd.objid
      join pg_dist_partition p on p.logicalrelid::oid = coalesce(i.indrelid, cmd.objid)
     where cmd.classid = 'pg_class'::regclass
  loop
    if placed.partmethod = 'n' then
      perform citus_stub_check_reference_keys(placed.logicalrelid);
    else
      perform citus_stub_check_unique_keys(placed.logicalrelid, placed.partkey);
      perform citus_stub_check_foreign_keys(placed.logicalrelid, placed.partkey, placed.colocationid,
        format('co-location group %s', placed.colocationid));
    end if;
  end loop;
end $$;

create or replace function citus_stub_after_drop() returns event_trigger
language plpgsql as $$
begin
  delete from pg_dist_partition where logicalrelid::oid in
    (select objid from pg_event_trigger_dropped_objects() where classid = 'pg_class'::regclass and object_type = 'table');
end $$;

drop event trigger if exists citus_stub_after_ddl;
create event trigger citus_stub_after_ddl on ddl_command_end when tag in ('ALTER TABLE', 'CREATE INDEX')
  execute function citus_stub_after_ddl();
drop event trigger if exists citus_stub_after_drop;
create event trigger citus_stub_after_drop on sql_drop when tag in ('DROP TABLE')
  execute function citus_stub_after_drop();
