/**
 * client.ts: a small typed client over the generic GraphQL operations (the
 * API stays model-parametrised, CONTRACT section 4). Per model it types what
 * `create` and `update` accept, the fields `where` and `orderBy` may name,
 * and the relations `include` may embed; results are the types of models.ts.
 */
import type { Field, FieldType, Model, SchemaIR, Scalar } from '../../runtime/ir/types.ts';
import { render } from './templates.ts';

const SCALAR_TS: Record<Scalar, string> = { string: 'string', number: 'number', boolean: 'boolean', date: 'string' };

/** The type a `where` compares a column with; null for jsonb columns (embeds, lists), which it cannot. */
const FILTER_TYPE: Record<FieldType['kind'], (type: FieldType) => string | null> = {
  scalar: (t) => (t.kind === 'scalar' ? SCALAR_TS[t.scalar] : null),
  enum: (t) => (t.kind === 'enum' ? (t.enum ?? t.values.map((v) => `'${escape(v)}'`).join(' | ')) : null),
  embed: () => null,
  list: () => null,
  belongsTo: () => 'string',
  hasMany: () => null,
  media: () => 'string',
};

/** The type `create` and `update` accept; dates also as a Date (sent as ISO 8601). */
const INPUT_TYPE: Record<FieldType['kind'], (type: FieldType) => string | null> = {
  scalar: (t) => (t.kind === 'scalar' ? (t.scalar === 'date' ? 'string | Date' : SCALAR_TS[t.scalar]) : null),
  enum: (t) => FILTER_TYPE.enum(t),
  embed: (t) => (t.kind === 'embed' ? `${t.embed}${t.list ? '[]' : ''}` : null),
  list: (t) => (t.kind === 'list' ? `${SCALAR_TS[t.of]}[]` : null),
  belongsTo: () => 'string',
  hasMany: () => null,
  media: () => 'string',
};

const SYSTEM_FILTERS = ['id: string;', 'tenantId: string | null;', 'createdAt: string;', 'updatedAt: string;'];

export function emitClient(ir: SchemaIR, schemaFile: string): string {
  const models = ir.models.map((model) => ({
    name: model.name,
    filterLines: [...SYSTEM_FILTERS, ...model.fields.flatMap(filterLine)],
    inputLines: model.fields.flatMap(inputLine),
    relations: relationsOf(model),
  }));
  // Models, and the enums and embedded blocks that some filter or input line names.
  const lines = models.flatMap((m) => [...m.filterLines, ...m.inputLines]).join('\n');
  const used = [...ir.enums, ...ir.embeds].map((t) => t.name).filter((name) => new RegExp(`\\b${name}\\b`).test(lines));
  return render('client.ts', { schemaFile, example: ir.models[0]?.name ?? 'Model', imports: [...ir.models.map((m) => m.name), ...used].sort(), models });
}

function filterLine(field: Field): string[] {
  const type = field.column === null ? null : convert(FILTER_TYPE, field.type);
  return type === null ? [] : [`${key(field.inputName)}: ${type}${field.required ? '' : ' | null'};`];
}

/** Required in `create` when the schema requires it and gives no @default. */
function inputLine(field: Field): string[] {
  const type = field.column === null ? null : convert(INPUT_TYPE, field.type);
  if (type === null) return [];
  const optional = !field.required || field.default !== undefined;
  return [`${key(field.inputName)}${optional ? '?' : ''}: ${type}${field.required ? '' : ' | null'};`];
}

function relationsOf(model: Model): string {
  const names = model.fields.filter((f) => f.type.kind === 'belongsTo' || f.type.kind === 'hasMany').map((f) => `'${f.name}'`);
  return names.length > 0 ? names.join(' | ') : 'never';
}

function convert(table: Record<FieldType['kind'], (type: FieldType) => string | null>, type: FieldType): string | null {
  const fn = table[type.kind];
  if (!fn) throw new Error(`svc-gen bug: no client type for field kind ${type.kind}`);
  return fn(type);
}

function key(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

function escape(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
}
