/**
 * The `svc-gen/schema` export: what an operator's schema.ts imports.
 *
 * svc-gen never executes schema.ts (it reads it with ts-morph), so these are
 * types for the editor plus an identity function that keeps the file valid
 * TypeScript. Only literal values are understood by the generator.
 */
import type { Operation, Role } from '../runtime/ir/types.ts';

export type { Operation, Role };

/** Who may perform an operation: anyone, any signed-in user, or these roles (Admin always may). */
export type AccessValue = 'public' | 'authenticated' | readonly Role[];

export interface ModelOptions {
  /** Absent operations default to: read `authenticated`, create/update/delete `['Admin']`. */
  access?: Partial<Record<Operation, AccessValue>>;
  /** Fields the anonymous endpoint `/public/records/{model}` may return. */
  publicRead?: { fields: readonly string[] };
}

export interface SchemaDefinition {
  models: Record<string, ModelOptions>;
}

export function defineSchema<const T extends SchemaDefinition>(def: T): T {
  return def;
}
