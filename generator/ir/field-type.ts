/** Resolves a field's written type against the declared names. */
import type { FieldType } from '../../runtime/ir/types.ts';
import type { RawField } from '../parse/index.ts';
import type { Declarations } from './declarations.ts';

export type Resolved =
  | { readonly ok: true; readonly type: FieldType }
  | { readonly ok: false; readonly code: 'UNSUPPORTED_TYPE' | 'RELATION_TARGET_MISSING'; readonly problem: string; readonly hint?: string };

const unsupported = (problem: string, hint?: string): Resolved => ({ ok: false, code: 'UNSUPPORTED_TYPE', problem, ...(hint ? { hint } : {}) });
const ok = (type: FieldType): Resolved => ({ ok: true, type });

/** `inEmbed`: fields of an embedded block cannot be relations. */
export function resolveFieldType(field: RawField, decls: Declarations, inEmbed: boolean): Resolved {
  const raw = field.type;
  switch (raw.kind) {
    case 'unsupported':
      return /\b(null|undefined)\b/.test(raw.text)
        ? unsupported(`unsupported type ${raw.text}`, `write \`${field.name}?: T\` for an optional field`)
        : unsupported(`unsupported type ${raw.text}`, 'use string, number, boolean, Date, a string union, an exported interface or an array of these');
    case 'keyword':
      return ok(raw.array ? { kind: 'list', of: raw.keyword } : { kind: 'scalar', scalar: raw.keyword });
    case 'union':
      return raw.array ? unsupported('a list of enum values is not supported') : ok({ kind: 'enum', enum: null, values: raw.values });
    case 'reference':
      return resolveReference(raw.name, raw.array, decls, inEmbed);
  }
}

function resolveReference(name: string, array: boolean, decls: Declarations, inEmbed: boolean): Resolved {
  if (name === 'Date') return ok(array ? { kind: 'list', of: 'date' } : { kind: 'scalar', scalar: 'date' });
  if (name === decls.media) return array ? unsupported('a list of Media is not supported', 'use one Media field per file') : ok({ kind: 'media' });
  const enumDef = decls.enums.get(name);
  if (enumDef) return array ? unsupported(`a list of enum ${name} is not supported`) : ok({ kind: 'enum', enum: name, values: enumDef.values });
  if (decls.embeds.has(name)) return ok({ kind: 'embed', embed: name, list: array });
  if (decls.models.has(name)) {
    if (inEmbed) return unsupported(`an embedded block cannot refer to the model ${name}`);
    return ok(array ? { kind: 'hasMany', model: name, inverse: '' } : { kind: 'belongsTo', model: name });
  }
  if (decls.otherAliases.has(name)) return unsupported(`type ${name} is not a union of string literals`);
  return { ok: false, code: 'RELATION_TARGET_MISSING', problem: `unknown type ${name}`, hint: 'no exported interface or type alias has that name' };
}

/** Short human description, used in messages and migration headers: `Stage`, `Address[]`, `belongsTo Company`. */
export function describeType(type: FieldType): string {
  switch (type.kind) {
    case 'scalar':
      return type.scalar === 'date' ? 'Date' : type.scalar;
    case 'enum':
      return type.enum ?? type.values.map((v) => `'${v}'`).join(' | ');
    case 'embed':
      return type.list ? `${type.embed}[]` : type.embed;
    case 'list':
      return `${type.of === 'date' ? 'Date' : type.of}[]`;
    case 'belongsTo':
      return type.model;
    case 'hasMany':
      return `${type.model}[]`;
    case 'media':
      return 'Media';
  }
}
