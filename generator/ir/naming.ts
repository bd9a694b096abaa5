/**
 * The one place where names are derived: tables, columns, input names,
 * constraints, indexes, projections, migration slugs. Postgres truncates
 * identifiers at 63 bytes, so longer names get a short stable hash suffix
 * instead of colliding silently.
 */
import { PG_MAX_IDENTIFIER_BYTES, pgIdentifier } from '../../runtime/ir/identifiers.ts';

export { PG_MAX_IDENTIFIER_BYTES, pgIdentifier, projectionTableName } from '../../runtime/ir/identifiers.ts';

/** `DealStage` -> `deal_stage`, `lastContactAt` -> `last_contact_at`, `HTTPLog` -> `http_log`. */
export function snakeCase(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

export function tableName(model: string): string {
  return pgIdentifier(snakeCase(model));
}

/** Column of a declared field; belongsTo fields store the target id in `<field>_id`. */
export function columnName(field: string, belongsTo: boolean): string {
  return pgIdentifier(belongsTo ? `${snakeCase(field)}_id` : snakeCase(field));
}

/** Name in JSON data: `company` (belongsTo) is written and read as `companyId`. */
export function inputName(field: string, belongsTo: boolean): string {
  return belongsTo ? `${field}Id` : field;
}

export function indexName(table: string, column: string): string {
  return pgIdentifier(`${table}_${column}_idx`);
}

export function uniqueIndexName(table: string, column: string): string {
  return pgIdentifier(`${table}_${column}_key`);
}

/** Layout 2 (tenant-leading) index names: distinct from layout 1's so both exist while an index is switched. */
export function tenantIndexName(table: string, column: string): string {
  return pgIdentifier(`${table}_${column}_tidx`);
}

export function tenantUniqueIndexName(table: string, column: string): string {
  return pgIdentifier(`${table}_${column}_tkey`);
}

/** `(tenant_id, id)`: a tenant's default list order. */
export function tenantListIndexName(table: string): string {
  return pgIdentifier(`${table}_tenant_id_tidx`);
}

/** The transient `check (c is not null)` that lets `set not null` skip its scan. */
export function notNullCheckName(table: string, column: string): string {
  return pgIdentifier(`${table}_${column}_notnull`);
}

/** Function and trigger keeping an old and a new column in step during an expand/contract. */
export function syncTriggerName(table: string, column: string): string {
  return pgIdentifier(`${table}_${column}_sync`);
}

/**
 * The column of a field whose type change rewrites: `amount` -> `amount_v2`,
 * `amount_v2` -> `amount_v3`, skipping names in `taken`.
 */
export function nextColumnName(column: string, taken: ReadonlySet<string>): string {
  const match = /^(.*)_v(\d+)$/.exec(column);
  const base = match ? match[1] : column;
  for (let n = match ? Number(match[2]) + 1 : 2; ; n++) {
    const name = pgIdentifier(`${base}_v${n}`);
    if (!taken.has(name)) return name;
  }
}

export function checkName(table: string, column: string): string {
  return pgIdentifier(`${table}_${column}_check`);
}

export function foreignKeyName(table: string, column: string): string {
  return pgIdentifier(`${table}_${column}_fkey`);
}

/** Layout 3's composite `(tenant_id, column) -> (tenant_id, id)`: a name of its own, so it is added beside the old key and validated before that one goes. */
export function tenantForeignKeyName(table: string, column: string): string {
  return pgIdentifier(`${table}_${column}_tfkey`);
}

/** Layout 4's `on delete no action` key while it stands beside layout 3's `set null` one (the contract drops that one and renames this one to `tenantForeignKeyName`). */
export function relaxedForeignKeyName(table: string, column: string): string {
  return pgIdentifier(`${table}_${column}_nfkey`);
}

/**
 * The primary key's name as Postgres chooses it for an unnamed key
 * (`makeObjectName`: the table name clipped so that `_pkey` fits in 63 bytes).
 * Layout 3 keeps it: a converted table and a fresh one carry the same name.
 */
export function primaryKeyName(table: string): string {
  const room = PG_MAX_IDENTIFIER_BYTES - '_pkey'.length;
  let clipped = table;
  while (Buffer.byteLength(clipped, 'utf8') > room) clipped = clipped.slice(0, -1);
  return `${clipped}_pkey`;
}

/** The unique `(tenant_id, id)` index built concurrently, then turned into the primary key (`using index` renames it). */
export function nextPrimaryKeyIndexName(table: string): string {
  return pgIdentifier(`${table}_tenant_id_id_key`);
}

/** `"order"`: every identifier in generated SQL is quoted, so keywords work as names. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** `'it''s'` */
export function quoteLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** Lower-case words joined by `_`, for file names: `add field Contact.vip` -> `add_field_contact_vip`. */
export function slug(text: string, maxLength = 60): string {
  const words = snakeCase(text).replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  return words.slice(0, maxLength).replace(/_+$/, '') || 'change';
}

/** npm-style package name part: `My CRM` -> `my-crm`. */
export function packageSlug(text: string): string {
  return slug(text).replace(/_/g, '-');
}

/** `0002_add_contact_vip.sql` */
export function migrationFileName(sequence: number, description: string): string {
  return `${String(sequence).padStart(4, '0')}_${slug(description)}.sql`;
}

/** The TypeScript type of an action's input: `scoreLead` -> `ScoreLeadInput`. */
export function actionInputTypeName(action: string): string {
  return `${action.charAt(0).toUpperCase()}${action.slice(1)}Input`;
}
