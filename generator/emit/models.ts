/**
 * models.ts: TypeScript types of every model, enum and embedded block, as the
 * runtime returns them in JSON (dates as ISO strings, absent values as null).
 */
import type { Field, FieldKind, FieldType, SchemaIR, Scalar } from '../../runtime/ir/types.ts';
import { render } from './templates.ts';

const SCALAR_TS: Record<Scalar, string> = { string: 'string', number: 'number', boolean: 'boolean', date: 'string' };

const TS_TYPE: Record<FieldKind, (type: FieldType) => string> = {
  scalar: (t) => (t.kind === 'scalar' ? SCALAR_TS[t.scalar] : never(t)),
  enum: (t) => (t.kind === 'enum' ? (t.enum ?? t.values.map((v) => `'${escape(v)}'`).join(' | ')) : never(t)),
  embed: (t) => (t.kind === 'embed' ? `${t.embed}${t.list ? '[]' : ''}` : never(t)),
  list: (t) => (t.kind === 'list' ? `${SCALAR_TS[t.of]}[]` : never(t)),
  belongsTo: (t) => (t.kind === 'belongsTo' ? t.model : never(t)),
  hasMany: (t) => (t.kind === 'hasMany' ? `${t.model}[]` : never(t)),
  // A media id (GET /media/{id}); the schema's branded `Media` is for the editor only.
  media: () => 'string',
};

const SYSTEM_LINES = ['id: string;', 'tenantId: string | null;', '/** ISO 8601 */', 'createdAt: string;', '/** ISO 8601 */', 'updatedAt: string;', '/** ISO 8601; set while the record is in the trash. */', 'deletedAt: string | null;'];

export function emitModels(ir: SchemaIR, schemaFile: string): string {
  return render('models.ts', {
    schemaFile,
    enums: ir.enums.map((e) => ({ name: e.name, union: e.values.map((v) => `'${escape(v)}'`).join(' | ') })),
    embeds: ir.embeds.map((e) => ({ name: e.name, lines: e.fields.flatMap((f) => fieldLines(f, false)) })),
    models: ir.models.map((m) => ({ name: m.name, lines: [...SYSTEM_LINES, ...m.fields.flatMap((f) => fieldLines(f, true))] })),
    modelNames: ir.models.map((m) => m.name),
  });
}

function tsType(type: FieldType): string {
  const convert = TS_TYPE[type.kind];
  if (!convert) throw new Error(`svc-gen bug: no TypeScript type for field kind ${type.kind}`);
  return convert(type);
}

/** Model fields may come back null when optional; embedded fields are simply absent. */
function fieldLines(field: Field, inModel: boolean): string[] {
  const doc = docComment(field);
  const nullable = inModel && !field.required ? ' | null' : '';
  const mark = field.required ? '' : '?';
  if (field.type.kind === 'belongsTo') {
    return [
      ...doc,
      `${key(field.inputName)}${mark}: string${nullable};`,
      `/** The ${field.type.model} of ${field.inputName}; present when included. */`,
      `${key(field.name)}?: ${field.type.model}${nullable};`,
    ];
  }
  if (field.type.kind === 'hasMany') {
    return [`/** ${field.type.model} records whose ${field.type.inverse} is this one; present when included. */`, `${key(field.name)}?: ${tsType(field.type)};`];
  }
  return [...doc, `${key(field.name)}${mark}: ${tsType(field.type)}${nullable};`];
}

function docComment(field: Field): string[] {
  const { email, numeric, min, max } = field.validation;
  const tags = [
    email ? '@email' : '',
    numeric ? '@numeric' : '',
    min !== undefined ? `@min ${min}` : '',
    max !== undefined ? `@max ${max}` : '',
    field.default !== undefined ? `@default ${typeof field.default === 'string' ? `'${field.default}'` : String(field.default)}` : '',
    field.unique ? '@unique' : '',
    field.index ? '@index' : '',
  ].filter(Boolean);
  return tags.length ? [`/** ${tags.join(' ')} */`] : [];
}

function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

function escape(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}

function never(type: FieldType): never {
  throw new Error(`svc-gen bug: TS type converter got ${type.kind}`);
}

