/**
 * Change -> steps, each in the form that is safe on a busy table (issue 28,
 * docs/migrations.md): catalog-only statements in short transactional steps,
 * scans and index builds online, row updates as batched backfills. One
 * converter per change kind in a Record, so a kind without a converter fails
 * type-checking; at run time an unknown kind throws rather than dropping SQL.
 */
import { SYSTEM_COLUMNS, type Field } from '../../../runtime/ir/types.ts';
import { checkName, foreignKeyName, nextPrimaryKeyIndexName, notNullCheckName, primaryKeyName, quoteIdent, relaxedForeignKeyName, syncTriggerName, tenantForeignKeyName } from '../../ir/naming.ts';
import { checkConstraint, columnDefinition, columnFields, sqlLiteral, sqlType } from '../sql.ts';
import { where, type Change, type ChangeKind, type ChangeOf } from './changes.ts';
import { contractSql, expandSql } from './expand.ts';
import { createIndexSql, dropIndexSql, duplicatesSql, indexesOf, CURRENT_LAYOUT } from './indexes.ts';
import { backfill, online, preflight, transactional, type Step } from './steps.ts';

interface Context {
  /** Table of a model in the new schema (foreign-key targets). */
  readonly tableOf: (model: string) => string;
}

type Converter<K extends ChangeKind> = (change: ChangeOf<K>, ctx: Context) => Step[];

/** Layout 3 (ADR 025): the primary key is `(tenant_id, id)`, a table constraint of createTable; no default for the tenant (the runtime stamps it, '' for the global scope). */
const SYSTEM_DEFINITIONS: Record<(typeof SYSTEM_COLUMNS)[number]['column'], string> = {
  id: 'text not null',
  tenant_id: 'text not null',
  created_at: 'timestamptz not null default now()',
  updated_at: 'timestamptz not null default now()',
  deleted_at: 'timestamptz',
};

const q = quoteIdent;
const alter = (table: string) => `alter table ${q(table)}`;

/** A CHECK added without scanning (it holds for new row versions at once), then validated online. */
function checkSteps(table: string, field: Field, what: string): { add: string[]; validate: Step[] } {
  const check = checkConstraint(table, field);
  if (!check) return { add: [], validate: [] };
  const name = q(checkName(table, field.column!));
  return { add: [`${alter(table)} add ${check} not valid;`], validate: [online(`validate the values of ${what}`, `${alter(table)} validate constraint ${name};`)] };
}

/**
 * NOT NULL without a scan under ACCESS EXCLUSIVE (Postgres 12+ uses a
 * validated `check (c is not null)`): fill the nulls with the default, add
 * the check NOT VALID (after the backfill: a NOT VALID check refuses updates
 * of rows not yet filled), validate it online, then set not null and drop it.
 */
function requiredSteps(table: string, field: Field, what: string): Step[] {
  const fill = field.default === undefined ? null : { value: sqlLiteral(field.default), description: `set ${what} to its default where it is null` };
  return notNullSteps(table, field.column!, what, fill);
}

function notNullSteps(table: string, name: string, what: string, filler: { value: string; description: string } | null): Step[] {
  const column = q(name);
  const check = q(notNullCheckName(table, name));
  const fill = filler === null ? [] : [backfill(table, filler.description, `update ${q(table)} set ${column} = ${filler.value} where ${column} is null;`)];
  return [
    ...fill,
    transactional(`check ${what} is not null, for new rows only`, `${alter(table)} add constraint ${check} check (${column} is not null) not valid;`),
    online(`validate ${what} is not null`, `${alter(table)} validate constraint ${check};`),
    transactional(`set ${what} not null (the validated check spares the scan) and drop the check`, `${alter(table)} alter column ${column} set not null;`, `${alter(table)} drop constraint ${check};`),
  ];
}

const CONVERTERS: { [K in ChangeKind]: Converter<K> } = {
  createTable: ({ model }) => {
    const fields = columnFields(model.fields);
    const lines = [
      ...SYSTEM_COLUMNS.map((c) => `${q(c.column)} ${SYSTEM_DEFINITIONS[c.column]}`),
      ...fields.map(columnDefinition),
      ...fields.flatMap((f) => checkConstraint(model.table, f) ?? []),
      'primary key ("tenant_id", "id")',
    ];
    const table = `create table ${q(model.table)} (\n${lines.map((l) => `  ${l}`).join(',\n')}\n);`;
    // The table is created in this same transaction: its indexes build on no rows, so the plain (not concurrently) form is safe here.
    const indexes = indexesOf(model, CURRENT_LAYOUT).map((index) => createIndexSql(index, 'new table'));
    return [transactional(`add model ${model.name} (a new, empty table and its indexes)`, table, ...indexes)];
  },
  dropTable: ({ model }) => [transactional(`drop model ${model.name}`, `drop table ${q(model.table)};`)],
  addColumn: (c) => {
    const { table, field } = c;
    const check = checkSteps(table, field, where(c));
    // Every @default is a literal: Postgres 11+ keeps a constant default in the catalog, so this rewrites no row.
    return [transactional(`add field ${where(c)}`, `${alter(table)} add column ${columnDefinition(field)};`, ...check.add), ...check.validate];
  },
  dropColumn: (c) => [transactional(`drop field ${where(c)}`, `${alter(c.table)} drop column ${q(c.field.column!)};`)],
  releaseColumn: (c) => [transactional(`let ${where(c)} be null until the contract drops it`, `${alter(c.table)} alter column ${q(c.field.column!)} drop not null;`)],
  alterType: (c) => {
    const { table, from, field } = c;
    if (sqlType(from.type) !== sqlType(field.type)) throw new Error(`svc-gen bug: ${where(c)} changes its SQL type in place`);
    const column = q(field.column!);
    const out: string[] = [];
    if (from.type.kind === 'enum') out.push(`${alter(table)} drop constraint if exists ${q(checkName(table, field.column!))};`);
    if (from.type.kind === 'belongsTo') {
      // Any key form: the layout-3 one, layout 4's beside it before its contract, or the single-column one of a table converted in this same migration.
      out.push(`${alter(table)} drop constraint if exists ${q(tenantForeignKeyName(table, field.column!))};`);
      out.push(`${alter(table)} drop constraint if exists ${q(relaxedForeignKeyName(table, field.column!))};`);
      out.push(`${alter(table)} drop constraint if exists ${q(foreignKeyName(table, field.column!))};`);
    }
    if (from.default !== field.default) out.push(`${alter(table)} alter column ${column} ${field.default === undefined ? 'drop default' : `set default ${sqlLiteral(field.default)}`};`);
    const check = checkSteps(table, field, where(c));
    return [transactional(`change type of ${where(c)} in place (same column type, no rewrite)`, ...out, ...check.add), ...check.validate];
  },
  expandColumn: (c) => {
    const check = checkSteps(c.table, c.field, where(c));
    const sync = expandSql(c);
    return [
      transactional(`add column "${c.field.column}" for ${where(c)}, kept in step with "${c.from.column}" by a trigger`, ...sync.add, ...check.add),
      backfill(c.table, `copy "${c.from.column}" into "${c.field.column}"`, sync.backfill),
      ...check.validate,
      ...(c.field.required ? requiredSteps(c.table, { ...c.field, default: undefined }, where(c)) : []),
    ];
  },
  contractColumn: (c) => [transactional(`drop the trigger and the old column "${c.from.column}" of ${where(c)}`, ...contractSql(c))],
  replaceCheck: (c) => {
    const check = checkSteps(c.table, c.field, where(c));
    return [transactional(`replace the allowed values of ${where(c)}`, `${alter(c.table)} drop constraint if exists ${q(checkName(c.table, c.field.column!))};`, ...check.add), ...check.validate];
  },
  setRequired: (c) => requiredSteps(c.table, c.field, where(c)),
  dropRequired: (c) => [transactional(`make ${where(c)} optional`, `${alter(c.table)} alter column ${q(c.field.column!)} drop not null;`)],
  setDefault: (c) => {
    const action = c.field.default === undefined ? 'drop default' : `set default ${sqlLiteral(c.field.default)}`;
    return [transactional(`${c.field.default === undefined ? 'drop' : 'set'} the default of ${where(c)}`, `${alter(c.table)} alter column ${q(c.field.column!)} ${action};`)];
  },
  addIndex: ({ index }) => {
    const check = index.unique ? [preflight(`no duplicates for the ${index.what}`, duplicatesSql(index))] : [];
    return [...check, online(`add ${index.what} (${index.keys.replace(/"/g, '')})`, createIndexSql(index, 'existing table'))];
  },
  dropIndex: ({ index }) => [online(`drop ${index.what} ("${index.name}")`, dropIndexSql(index))],
  relayout: () => [],
  addForeignKey: (c, ctx) => {
    const key = tenantKey(c, ctx);
    if (c.newTable) return [transactional(`reference ${key.target} from ${where(c)} (a new, empty table)`, `${key.add};`)];
    return [transactional(`reference ${key.target} from ${where(c)}, for new rows only`, `${key.add} not valid;`), key.validate];
  },
  tenantNotNull: ({ model, table }) => {
    const name = q(syncTriggerName(table, 'tenant_id'));
    const what = `${model}.tenant_id`;
    return [
      transactional(
        `fill ${what} with '' (the global scope) where a writer of an older build leaves it null, until the contract`,
        [`create or replace function ${name}() returns trigger language plpgsql as $$`, 'begin', `  if new."tenant_id" is null then new."tenant_id" := ''; end if;`, '  return new;', 'end', '$$;'].join('\n'),
        `create trigger ${name} before insert or update on ${q(table)} for each row execute function ${name}();`,
      ),
      ...notNullSteps(table, 'tenant_id', what, { value: "''", description: `set ${what} to '' (the global scope) where it is null` }),
    ];
  },
  keyIndex: ({ model, table }) => [
    online(`add the unique (tenant_id, id) of ${model}, its primary key to be`, `create unique index concurrently if not exists ${q(nextPrimaryKeyIndexName(table))} on ${q(table)} ("tenant_id", "id");`),
  ],
  swapForeignKey: (c, ctx) => {
    const { table, field } = c;
    const key = tenantKey(c, ctx);
    const column = q(field.column!);
    const strays = `select "row"."id", "row"."tenant_id", "row".${column}, "target"."tenant_id" as "target_tenant_id" from ${q(table)} "row" join ${q(key.targetTable)} "target" on "target"."id" = "row".${column} where "target"."tenant_id" <> "row"."tenant_id" limit 10;`;
    return [
      preflight(`no ${where(c)} refers to a ${key.target} of another tenant`, strays),
      transactional(`reference ${key.target} from ${where(c)} by (tenant_id, id), for new rows only`, `${key.add} not valid;`),
      key.validate,
      transactional(`drop the single-column reference ${where(c)} (the validated (tenant_id, id) one replaces it)`, `${alter(table)} drop constraint if exists ${q(foreignKeyName(table, field.column!))};`),
    ];
  },
  relaxForeignKey: (c, ctx) => {
    const key = tenantKey(c, ctx, relaxedForeignKeyName(c.table, c.field.column!));
    return [
      transactional(`reference ${key.target} from ${where(c)} on delete ${key.onDelete} beside the set null key, for new rows only`, `${key.add} not valid;`),
      key.validate,
    ];
  },
  dropSetNullKey: ({ table, field, model }) => {
    const column = field.column!;
    return [transactional(
      `drop the on delete set null key of ${model}.${field.name} (the validated no action one replaces it) and give the new key its name`,
      `${alter(table)} drop constraint if exists ${q(tenantForeignKeyName(table, column))};`,
      `${alter(table)} rename constraint ${q(relaxedForeignKeyName(table, column))} to ${q(tenantForeignKeyName(table, column))};`,
    )];
  },
  releaseForeignKey: (c) => [
    transactional(`drop the reference key of ${where(c)} (the column goes in the contract; the key holds the old primary key of its target)`, `${alter(c.table)} drop constraint if exists ${q(foreignKeyName(c.table, c.field.column!))};`),
  ],
  swapPrimaryKey: ({ model, table }) => {
    const key = q(primaryKeyName(table));
    return [transactional(
      `key ${model} by (tenant_id, id): the validated unique index becomes the primary key (catalog only)`,
      `${alter(table)} drop constraint ${key}, add constraint ${key} primary key using index ${q(nextPrimaryKeyIndexName(table))};`,
    )];
  },
  releaseTenant: ({ model, table }) => {
    const name = q(syncTriggerName(table, 'tenant_id'));
    return [transactional(`drop the trigger that fills ${model}.tenant_id (no instance of an older build writes null any more)`, `drop trigger if exists ${name} on ${q(table)};`, `drop function if exists ${name}();`)];
  },
};

/**
 * The relation key `(tenant_id, x_id) -> x (tenant_id, id)` (layout 3): a row
 * may only refer to a row of its own tenant. A required reference refuses its
 * target's delete (`restrict`); an optional one is `no action` (layout 4):
 * Citus refuses `set null`/`set default` on a key holding the distribution
 * column (ADR 025), so the runtime sets the column to null itself, in the hard
 * delete's transaction, before it deletes the target.
 */
function tenantKey(c: { table: string; field: Field; model: string }, { tableOf }: Context, keyName?: string) {
  const { table, field } = c;
  if (field.type.kind !== 'belongsTo') throw new Error(`svc-gen bug: foreign key on ${field.name}, which is not a belongsTo`);
  const targetTable = tableOf(field.type.model);
  const column = q(field.column!);
  const onDelete = field.required ? 'restrict' : 'no action';
  const name = q(keyName ?? tenantForeignKeyName(table, field.column!));
  return {
    target: field.type.model,
    targetTable,
    onDelete,
    add: `${alter(table)} add constraint ${name} foreign key ("tenant_id", ${column}) references ${q(targetTable)} ("tenant_id", "id") on delete ${onDelete}`,
    validate: online(`validate the reference ${where(c)}`, `${alter(table)} validate constraint ${name};`),
  };
}

/** Steps for one change; `tables` maps model names to tables of the new schema. */
export function convertChange(change: Change, tables: ReadonlyMap<string, string>): Step[] {
  const converter = CONVERTERS[change.kind] as Converter<ChangeKind> | undefined;
  if (!converter) throw new Error(`svc-gen bug: no SQL converter for change ${change.kind}`);
  const tableOf = (model: string) => {
    const table = tables.get(model);
    if (!table) throw new Error(`svc-gen bug: foreign key to unknown model ${model}`);
    return table;
  };
  return converter(change, { tableOf });
}
