/**
 * The intermediate representation (IR) of an operator's schema.
 *
 * Frozen plain data shared by the generator (which derives it from schema.ts)
 * and the runtime (which serves it). No classes, functions or Dates: it must
 * round-trip through JSON unchanged (schema.snapshot.json, /meta/schema).
 */

import type { AccessRule, Operation } from './access.ts';
import type { FieldType, Literal } from './field-type.ts';
import type { ActionBinding, ActionDef, WorkflowDef } from './automation.ts';

export * from './access.ts';
export * from './field-type.ts';
export type * from './automation.ts';

export interface Validation {
  readonly email?: true;
  readonly numeric?: true;
  /** number: minimum value; string: minimum length; list: minimum items. */
  readonly min?: number;
  readonly max?: number;
}

export interface Field {
  readonly kind: 'field';
  /** camelCase name as written in schema.ts (for belongsTo: `company`). */
  readonly name: string;
  /**
   * Database column (snake_case; for belongsTo: `company_id`); null for hasMany,
   * which has no column of its own.
   */
  readonly column: string | null;
  /** Name accepted/returned in JSON data (for belongsTo: `companyId`). */
  readonly inputName: string;
  readonly type: FieldType;
  /** Not optional in schema.ts: NOT NULL, must be present on create. */
  readonly required: boolean;
  readonly validation: Validation;
  readonly default?: Literal;
  readonly unique: boolean;
  readonly index: boolean;
  /** Tagged `@sensitive`: the audit log shows its values as "[redacted]". */
  readonly sensitive: boolean;
}

export interface PublicRead {
  /** Fields (IR names) the anonymous endpoint may return. */
  readonly fields: readonly string[];
}

export interface Model {
  readonly kind: 'model';
  readonly name: string;
  readonly table: string;
  /** Declared fields in source order, without the system fields. */
  readonly fields: readonly Field[];
  readonly access: Readonly<Record<Operation, AccessRule>>;
  readonly publicRead: PublicRead | null;
}

export interface EnumDef {
  readonly kind: 'enum';
  readonly name: string;
  readonly values: readonly string[];
}

export interface EmbedDef {
  readonly kind: 'embed';
  readonly name: string;
  /** Only scalar, enum, list and embed fields; `column` is null. */
  readonly fields: readonly Field[];
}

export interface SchemaIR {
  readonly kind: 'schema';
  readonly version: 1;
  readonly models: readonly Model[];
  readonly enums: readonly EnumDef[];
  readonly embeds: readonly EmbedDef[];
  /** Declared actions by name (CONTRACT section 11); empty in snapshots written before them. */
  readonly actions: readonly ActionDef[];
  /** Model -> action bindings, by model, event, then declared order. */
  readonly bindings: readonly ActionBinding[];
  /** Declared workflows by name (CONTRACT section 12). */
  readonly workflows: readonly WorkflowDef[];
}

/**
 * Columns every entity table has besides its declared fields. The JSON names
 * are what GraphQL returns.
 */
export const SYSTEM_COLUMNS = [
  { name: 'id', column: 'id' },
  { name: 'tenantId', column: 'tenant_id' },
  { name: 'createdAt', column: 'created_at' },
  { name: 'updatedAt', column: 'updated_at' },
  { name: 'deletedAt', column: 'deleted_at' },
] as const;

/** Table-name prefix reserved for the runtime's own tables. */
export const RUNTIME_TABLE_PREFIX = 'svc_';
