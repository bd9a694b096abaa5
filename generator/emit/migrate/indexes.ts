/**
 * The indexes a model's table carries, per index layout. The migration diff
 * compares the set the database has (the previous snapshot's models in the
 * previous snapshot's layout) with the set the new build wants, by name.
 *
 * Layout 1 (snapshots without `layout`): `(tenant_id)`, `(column)` per
 * `@index` and belongsTo, `(coalesce(tenant_id, ''), column)` per `@unique`.
 * Some layout-1 databases lack their Media columns' index (the diff never saw
 * it), so layout 1 does not count it and layout 2 creates it `if not exists`.
 *
 * Layout 2: every index a tenant's query walks leads with `tenant_id`:
 * `(tenant_id, id)` for the default list order, `(tenant_id, column, id)` per
 * `@index` (keyset pages are index walks), `(tenant_id, column) nulls not
 * distinct` per `@unique` (a null tenant is one tenant, as before; rows without
 * a value never collide, as before). belongsTo and Media columns keep
 * `(column)`: the foreign-key checks Postgres runs on a parent's delete, and
 * DELETE /media/{id}, look the column up without a tenant, and ids are
 * globally unique, so the column alone is as selective as it gets.
 *
 * Layout 3 (ADR 025, distributable): `tenant_id` is not null and the primary
 * key is `(tenant_id, id)`, which serves a tenant's default list order, so the
 * `(tenant_id, id)` index is not emitted twice. belongsTo columns are
 * composite keys `(tenant_id, x_id)` and their index leads with the tenant
 * (a parent's delete checks children by both columns). `@index` and `@unique`
 * are layout 2's, by name and definition. Media columns keep `(column)`:
 * DELETE /media/{id} looks them up by id alone.
 *
 * Layout 4 (ADR 025, "Relation keys on Citus"): layout 3's indexes and keys;
 * only the action of an optional belongsTo's key differs, `on delete no
 * action` instead of `set null (x_id)` (Citus refuses the latter on a key that
 * holds the distribution column): the runtime clears the references before a
 * hard delete. The layout number is the generator's marker that a database
 * still has the `set null` keys (snapshot `layout: 3`).
 */
import type { Field, Model } from '../../../runtime/ir/types.ts';
import { indexName, quoteIdent, tenantIndexName, tenantListIndexName, tenantUniqueIndexName, uniqueIndexName } from '../../ir/naming.ts';

export const CURRENT_LAYOUT = 4;
export type Layout = 1 | 2 | 3 | 4;
export const LAYOUTS: readonly Layout[] = [1, 2, 3, 4];
/** The first layout keyed `(tenant_id, id)` (ADR 025); 4 has its indexes and keys, its optional relation keys `on delete no action`. */
export const DISTRIBUTABLE_LAYOUT = 3;

export interface IndexDef {
  readonly name: string;
  readonly table: string;
  readonly unique: boolean;
  /** Key list as written: `"tenant_id", "amount", "id"`. */
  readonly keys: string;
  readonly nullsNotDistinct: boolean;
  readonly where: string | null;
  /** The declared field it serves; null for the tenant index. */
  readonly field: Field | null;
  /** `index on Deal.amount`, `unique on Contact.email`, `tenant index of Deal`. */
  readonly what: string;
  /** The unique's key columns, for the duplicate preflight. */
  readonly columns: readonly string[];
}

const q = quoteIdent;
const isReference = (f: Field) => f.type.kind === 'belongsTo' || f.type.kind === 'media';

export function indexesOf(model: Model, layout: Layout): IndexDef[] {
  const fields = model.fields.filter((f) => f.column !== null);
  if (layout === 1) return layoutOne(model, fields);
  return layoutTwo(model, fields, layout);
}

function layoutOne(model: Model, fields: readonly Field[]): IndexDef[] {
  const { table } = model;
  const out: IndexDef[] = [plain(table, indexName(table, 'tenant_id'), '"tenant_id"', null, `tenant index of ${model.name}`)];
  for (const f of fields) {
    const where = `${model.name}.${f.name}`;
    if (f.type.kind === 'belongsTo' || (f.index && !f.unique && f.type.kind !== 'media')) {
      out.push(plain(table, indexName(table, f.column!), q(f.column!), f, `index on ${where}`));
    }
    if (f.unique) {
      out.push({
        name: uniqueIndexName(table, f.column!), table, unique: true, keys: `coalesce("tenant_id", ''), ${q(f.column!)}`,
        nullsNotDistinct: false, where: '"deleted_at" is null', field: f, what: `unique on ${where}`, columns: ['tenant_id', f.column!],
      });
    }
  }
  return out;
}

/** Layouts 2 and 3 differ in the `(tenant_id, id)` index (3: the primary key) and the belongsTo index (3: `(tenant_id, x_id)`); 4 has 3's. */
function layoutTwo(model: Model, fields: readonly Field[], layout: 2 | 3 | 4): IndexDef[] {
  const { table } = model;
  const out: IndexDef[] = layout === 2 ? [plain(table, tenantListIndexName(table), '"tenant_id", "id"', null, `tenant index of ${model.name}`)] : [];
  for (const f of fields) {
    const where = `${model.name}.${f.name}`;
    const column = q(f.column!);
    if (layout >= 3 && f.type.kind === 'belongsTo') out.push(plain(table, tenantIndexName(table, f.column!), `"tenant_id", ${column}`, f, `index on ${where}`));
    else if (isReference(f)) out.push(plain(table, indexName(table, f.column!), column, f, `index on ${where}`));
    else if (f.index && !f.unique) out.push(plain(table, tenantIndexName(table, f.column!), `"tenant_id", ${column}, "id"`, f, `index on ${where}`));
    if (f.unique) {
      out.push({
        name: tenantUniqueIndexName(table, f.column!), table, unique: true, keys: `"tenant_id", ${column}`, nullsNotDistinct: true,
        where: `"deleted_at" is null and ${column} is not null`, field: f, what: `unique on ${where}`, columns: ['tenant_id', f.column!],
      });
    }
  }
  return out;
}

function plain(table: string, name: string, keys: string, field: Field | null, what: string): IndexDef {
  return { name, table, unique: false, keys, nullsNotDistinct: false, where: null, field, what, columns: [] };
}

/**
 * `create [unique] index`. On a table the same step creates (empty, invisible
 * to other sessions until commit) the plain form is instant; on an existing
 * table it is always `concurrently if not exists`, an online step of its own.
 */
export function createIndexSql(index: IndexDef, on: 'new table' | 'existing table'): string {
  const verb = on === 'new table' ? 'create index' : 'create index concurrently if not exists'; // plain only on a table this step creates
  const head = index.unique ? verb.replace('create index', 'create unique index') : verb;
  const nulls = index.nullsNotDistinct ? ' nulls not distinct' : '';
  const where = index.where ? ` where ${index.where}` : '';
  return `${head} ${q(index.name)} on ${q(index.table)} (${index.keys})${nulls}${where};`;
}

export function dropIndexSql(index: IndexDef): string {
  return `drop index concurrently if exists ${q(index.name)};`;
}

/** The rows a unique index would refuse: up to 10 duplicate key values with their count. */
export function duplicatesSql(index: IndexDef): string {
  const keys = index.columns.map(q).join(', ');
  const where = index.where ? ` where ${index.where}` : '';
  return `select ${keys}, count(*) as "rows" from ${q(index.table)}${where} group by ${keys} having count(*) > 1 order by count(*) desc limit 10;`;
}
