/**
 * Which models the anonymous endpoint serves and how: a model is public only
 * when the schema declares `publicRead` AND SVC_PUBLIC_READ_MODELS names it.
 * Field names in SVC_PUBLIC_READ_FIELDS_<Model> / SVC_PUBLIC_READ_FILTER_<Model>
 * are checked at start: an unknown one stops the server, naming the variable.
 */
import { ConfigError, type PublicReadConfig } from '../config/index.ts';
import type { Model } from '../ir/types.ts';
import type { TableProjection } from '../projections/index.ts';
import { sql, type Sql } from '../sql/index.ts';

export interface PublicModel {
  readonly model: string;
  readonly projection: TableProjection;
  /** `p."vendor_id" as "vendorId"`, ...: exactly the approved fields (`id` only when listed). */
  readonly select: Sql;
  /** Query parameter (any alias of an allowed field) -> projection column. */
  readonly filters: ReadonlyMap<string, string>;
  /** Fixed equality filters: column -> value; applied after the client's. */
  readonly fixed: ReadonlyMap<string, string>;
}

type Resolve = (name: string) => { column: string; aliases: string[] } | null;

function resolver(model: Model): Resolve {
  return (name) => {
    if (name === 'id') return { column: 'id', aliases: ['id'] };
    const field = model.fields.find((f) => f.column && [f.name, f.inputName, f.column].includes(name));
    return field ? { column: field.column!, aliases: [field.name, field.inputName, field.column!] } : null;
  };
}

export function planPublicModel(model: Model, projection: TableProjection, config: PublicReadConfig): PublicModel {
  const resolve = resolver(model);
  const fields = model.publicRead?.fields ?? [];
  const columns = fields.flatMap((name) => resolve(name)?.column ?? []);
  const select = sql.join([...new Set(columns)].map((column) => {
    const c = projection.columns.find((pc) => pc.column === column)!;
    return sql`p.${sql.ident(c.column)} as ${sql.ident(c.jsonName)}`;
  }), ', ');
  const filters = new Map<string, string>();
  for (const name of config.filterFields.get(model.name) ?? []) {
    const found = resolve(name);
    if (!found) throw new ConfigError(`SVC_PUBLIC_READ_FIELDS_${model.name}`, `names unknown field "${name}" of ${model.name}`);
    for (const alias of found.aliases) filters.set(alias, found.column);
  }
  const fixed = new Map<string, string>();
  for (const [name, value] of config.fixedFilters.get(model.name) ?? []) {
    const found = resolve(name);
    if (!found) throw new ConfigError(`SVC_PUBLIC_READ_FILTER_${model.name}`, `names unknown field "${name}" of ${model.name}`);
    fixed.set(found.column, value);
  }
  return { model: model.name, projection, select, filters, fixed };
}
