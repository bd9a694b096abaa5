/**
 * Per-model facts the records layer needs at every request, derived once
 * from the IR: quoted table, columns with their SQL types and JSON names, the
 * names an input may use for each column, and the relations.
 */
import type { Field, Model, SchemaIR, Scalar } from '../ir/types.ts';
import { SYSTEM_COLUMNS } from '../ir/types.ts';
import { isoUtcSql } from '../db/index.ts';
import { sql, type Sql } from '../sql/index.ts';
import { tenantOfSql } from '../tenancy/index.ts';

export type SqlType = 'text' | 'double precision' | 'boolean' | 'timestamptz' | 'jsonb';

export interface ColumnInfo {
  /** JSON name in output and the canonical input name (`companyId`, `tenantId`). */
  readonly name: string;
  readonly column: string;
  /** The column's quoted name. */
  readonly ident: Sql;
  readonly sqlType: SqlType;
  /** The declared field; null for system columns. */
  readonly field: Field | null;
}

export interface RelationInfo {
  readonly name: string;
  readonly kind: 'belongsTo' | 'hasMany';
  readonly target: string;
  /** The foreign-key column: on this model (belongsTo) or on the target (hasMany). */
  readonly foreignKey: string;
  /** JSON name of the foreign key (`companyId`). */
  readonly foreignKeyName: string;
}

/** An optional belongsTo column pointing at a model: the table and column a hard delete of the target sets to null. */
export interface OptionalReference {
  readonly model: string;
  readonly table: Sql;
  readonly column: Sql;
}

export interface ModelInfo {
  readonly model: Model;
  readonly name: string;
  readonly table: Sql;
  readonly columns: readonly ColumnInfo[];
  /** Declared fields that own a column, keyed by every accepted input spelling. */
  readonly inputs: ReadonlyMap<string, ColumnInfo>;
  /** Every column (system ones too) keyed by every accepted spelling; for where/orderBy. */
  readonly filterable: ReadonlyMap<string, ColumnInfo>;
  readonly relations: ReadonlyMap<string, RelationInfo>;
  /**
   * Every optional belongsTo of any model that points at this one: its key is
   * `on delete no action` (Citus refuses `set null` on a key holding the
   * distribution column, ADR 025), so a hard delete clears these first.
   */
  readonly referencedBy: readonly OptionalReference[];
  /** `select` list that yields rows already shaped as output JSON. */
  readonly selectList: Sql;
  fieldOfColumn(column: string): string | undefined;
}

const SCALAR_SQL: Record<Scalar, SqlType> = {
  string: 'text', number: 'double precision', boolean: 'boolean', date: 'timestamptz',
};

function sqlTypeOf(field: Field): SqlType {
  switch (field.type.kind) {
    case 'scalar': return SCALAR_SQL[field.type.scalar];
    case 'embed':
    case 'list': return 'jsonb';
    default: return 'text';
  }
}

const SYSTEM_TYPES: Record<string, SqlType> = {
  id: 'text', tenant_id: 'text', created_at: 'timestamptz', updated_at: 'timestamptz', deleted_at: 'timestamptz',
};

/**
 * Timestamps in the one response format (ISO 8601, UTC, milliseconds); cursors carry exact values (order.ts).
 * The tenant is null for the global scope's `''` (ADR 025 decision 2).
 */
function selectExpression(c: ColumnInfo): Sql {
  const source = sql`t.${c.ident}`;
  const value = c.sqlType === 'timestamptz' ? sql.raw(isoUtcSql(sql.text(source)))
    : c.column === 'tenant_id' ? tenantOfSql(source) : source;
  return sql`${value} as ${sql.ident(c.name)}`;
}

function columnsOf(model: Model): ColumnInfo[] {
  const system = SYSTEM_COLUMNS.map((s) => ({
    name: s.name, column: s.column, ident: sql.ident(s.column), sqlType: SYSTEM_TYPES[s.column], field: null,
  }));
  const declared = model.fields.filter((f) => f.column !== null).map((f) => ({
    name: f.inputName, column: f.column!, ident: sql.ident(f.column!), sqlType: sqlTypeOf(f), field: f,
  }));
  return [...system, ...declared];
}

function relationsOf(model: Model, byName: ReadonlyMap<string, Model>): Map<string, RelationInfo> {
  const relations = new Map<string, RelationInfo>();
  for (const f of model.fields) {
    if (f.type.kind === 'belongsTo') {
      relations.set(f.name, { name: f.name, kind: 'belongsTo', target: f.type.model, foreignKey: f.column!, foreignKeyName: f.inputName });
    } else if (f.type.kind === 'hasMany') {
      const inverse = f.type.inverse;
      const back = byName.get(f.type.model)?.fields.find((g) => g.name === inverse);
      if (!back?.column) continue;
      relations.set(f.name, { name: f.name, kind: 'hasMany', target: f.type.model, foreignKey: back.column, foreignKeyName: back.inputName });
    }
  }
  return relations;
}

function optionalReferences(target: Model, byName: ReadonlyMap<string, Model>): OptionalReference[] {
  return [...byName.values()].flatMap((m) => m.fields
    .filter((f) => f.type.kind === 'belongsTo' && f.type.model === target.name && !f.required && f.column !== null)
    .map((f) => ({ model: m.name, table: sql.ident(m.table), column: sql.ident(f.column!) })));
}

function spellings(c: ColumnInfo): string[] {
  return [...new Set([c.name, c.column, ...(c.field ? [c.field.name] : [])])]
    // `company` names the relation, not the column `company_id`.
    .filter((spelling) => !(c.field?.type.kind === 'belongsTo' && spelling === c.field.name));
}

export function compileModel(model: Model, byName: ReadonlyMap<string, Model>): ModelInfo {
  const columns = columnsOf(model);
  const filterable = new Map<string, ColumnInfo>();
  const inputs = new Map<string, ColumnInfo>();
  for (const c of columns) {
    for (const spelling of spellings(c)) {
      filterable.set(spelling, c);
      if (c.field) inputs.set(spelling, c);
    }
  }
  const byColumn = new Map(columns.map((c) => [c.column, c.name]));
  return {
    model, name: model.name, table: sql.ident(model.table), columns, inputs, filterable,
    relations: relationsOf(model, byName),
    referencedBy: optionalReferences(model, byName),
    // One constant fragment: compiled on every read, so it is flattened once here.
    selectList: sql.raw(sql.text(sql.join(columns.map(selectExpression), ', '))),
    fieldOfColumn: (column) => byColumn.get(column),
  };
}

/** Every entity model of the schema, compiled once at start. */
export function compileModels(ir: SchemaIR): ReadonlyMap<string, ModelInfo> {
  const byName = new Map(ir.models.map((m) => [m.name, m]));
  return new Map(ir.models.map((m) => [m.name, compileModel(m, byName)]));
}
