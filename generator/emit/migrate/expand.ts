/**
 * Expand/contract of a field that moves to a new column (a rename, or a type
 * change that would rewrite the table under ACCESS EXCLUSIVE).
 *
 * Expand: add the new column (nullable, no default), drop the old column's
 * default, and install a BEFORE trigger that keeps both in step both ways, so
 * old instances (writing the old column) and new ones (writing the new) see
 * the same data; then a batched backfill copies old rows. Defaults come from
 * the trigger while both columns live: a column default would hide which
 * column a writer actually set.
 *
 * Contract (once no old instance runs): drop the trigger and its function,
 * give the new column its default, drop the old column.
 */
import type { Field } from '../../../runtime/ir/types.ts';
import { quoteIdent, syncTriggerName } from '../../ir/naming.ts';
import { convertSql, sqlLiteral, sqlType } from '../sql.ts';

interface Moved {
  readonly table: string;
  readonly from: Field;
  readonly field: Field;
}

const q = quoteIdent;

function columns(c: Moved) {
  const [oldType, newType] = [sqlType(c.from.type)!, sqlType(c.field.type)!];
  const [oldColumn, newColumn] = [q(c.from.column!), q(c.field.column!)];
  return {
    oldColumn,
    newColumn,
    newType,
    /** The old column's value as the new column's type, and back. */
    forward: (row: string) => convertSql(`${row}.${oldColumn}`, oldType, newType),
    back: (row: string) => convertSql(`${row}.${newColumn}`, newType, oldType),
    fallback: c.field.default === undefined ? null : sqlLiteral(c.field.default),
  };
}

export function expandSql(c: Moved): { add: string[]; backfill: string } {
  const { oldColumn, newColumn, newType, forward, back, fallback } = columns(c);
  const name = q(syncTriggerName(c.table, c.field.column!));
  const table = q(c.table);
  const filled = fallback === null ? forward('new') : `coalesce(${forward('new')}, ${fallback})`;
  const fn = [
    `create or replace function ${name}() returns trigger language plpgsql as $$`,
    'begin',
    `  if tg_op = 'INSERT' then`,
    `    if new.${newColumn} is null then new.${newColumn} := ${filled}; end if;`,
    `    if new.${oldColumn} is null then new.${oldColumn} := ${back('new')}; end if;`,
    `  elsif new.${newColumn} is distinct from old.${newColumn} and new.${newColumn} is distinct from ${forward('new')} then`,
    `    new.${oldColumn} := ${back('new')};`,
    `  elsif new.${oldColumn} is distinct from old.${oldColumn} then`,
    `    new.${newColumn} := ${forward('new')};`,
    '  end if;',
    '  return new;',
    'end',
    '$$;',
  ].join('\n');
  const dropOldDefault = c.from.default === undefined ? [] : [`alter table ${table} alter column ${oldColumn} drop default;`];
  const source = convertSql(oldColumn, sqlType(c.from.type)!, newType);
  const value = fallback === null ? source : `coalesce(${source}, ${fallback})`;
  return {
    add: [
      `alter table ${table} add column ${newColumn} ${newType};`,
      ...dropOldDefault,
      fn,
      `create trigger ${name} before insert or update on ${table} for each row execute function ${name}();`,
    ],
    backfill: `update ${table} set ${newColumn} = ${value} where ${newColumn} is null;`,
  };
}

export function contractSql(c: Moved): string[] {
  const name = q(syncTriggerName(c.table, c.field.column!));
  const table = q(c.table);
  const setDefault = c.field.default === undefined ? [] : [`alter table ${table} alter column ${q(c.field.column!)} set default ${sqlLiteral(c.field.default)};`];
  return [
    `drop trigger if exists ${name} on ${table};`,
    `drop function if exists ${name}();`,
    ...setDefault,
    `alter table ${table} drop column ${q(c.from.column!)};`,
  ];
}
