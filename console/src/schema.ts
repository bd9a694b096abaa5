/** The schema's IR as the service serves it (GET /meta/schema): the per-model views are generated from it. */
import { rest, session } from './api.ts';

export type FieldType =
  | { kind: 'scalar'; scalar: 'string' | 'number' | 'boolean' | 'date' }
  | { kind: 'enum'; enum: string | null; values: string[] }
  | { kind: 'embed'; embed: string; list: boolean }
  | { kind: 'list'; of: 'string' | 'number' | 'boolean' | 'date' }
  | { kind: 'belongsTo'; model: string }
  | { kind: 'hasMany'; model: string; inverse: string }
  | { kind: 'media' };

export interface Field {
  name: string; inputName: string; type: FieldType; required: boolean; sensitive?: boolean;
  validation: { min?: number; max?: number; email?: boolean; numeric?: boolean }; default?: unknown;
}
export type Rule = { kind: 'public' } | { kind: 'authenticated' } | { kind: 'roles'; roles: string[] };
export type Operation = 'read' | 'create' | 'update' | 'delete';
export interface Model { name: string; fields: Field[]; access: Record<Operation, Rule> }
export interface Embed { name: string; fields: Field[] }
export interface Schema { models: Model[]; embeds: Embed[]; workflows?: unknown[] }

let cached: Promise<Schema> | null = null;

export function loadSchema(): Promise<Schema> {
  cached ??= rest<Schema>('GET', '/meta/schema').catch((error) => { cached = null; throw error; });
  return cached;
}

/** CONTRACT section 2: Admin may always do everything. */
export function allows(rule: Rule | undefined, role: string | undefined = session.user?.role): boolean {
  if (!role) return rule?.kind === 'public';
  if (role === 'Admin') return true;
  if (!rule) return false;
  return rule.kind !== 'roles' || rule.roles.includes(role);
}

/** The fields a form edits: everything but hasMany (edited from the other side). */
export const editable = (model: Model) => model.fields.filter((field) => field.type.kind !== 'hasMany');

/** A field to name a record by in lists and pickers: the first required string, else the id. */
export function labelField(model: Model): Field | undefined {
  return model.fields.find((f) => f.type.kind === 'scalar' && f.type.scalar === 'string' && f.required)
    ?? model.fields.find((f) => f.type.kind === 'scalar' && f.type.scalar === 'string');
}

export function typeName(type: FieldType): string {
  switch (type.kind) {
    case 'scalar': return type.scalar;
    case 'enum': return `enum ${type.enum ?? ''} (${type.values.join(' | ')})`;
    case 'embed': return `${type.embed}${type.list ? '[]' : ''} (embedded)`;
    case 'list': return `${type.of}[]`;
    case 'belongsTo': return `→ ${type.model}`;
    case 'hasMany': return `${type.model}[] (hasMany)`;
    case 'media': return 'Media';
  }
}
