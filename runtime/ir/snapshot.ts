/**
 * The canonical, JSON form of a SchemaIR: `schema.snapshot.json`.
 *
 * Canonical means: models, enums and embedded blocks keyed by name, keys
 * sorted (by stableStringify), default-valued keys omitted (unique: false,
 * validation: {}, publicRead: null, access rules equal to the defaults, ...),
 * and enum values stated once in `enums`. Fields stay an ordered array because
 * their source order is meaningful. A rebuild of an unchanged schema is
 * byte-identical; a diff of two snapshots shows only what changed.
 *
 * `fromSnapshot` restores the full IR (the runtime calls it at boot).
 */
import {
  OPERATIONS,
  type AccessRule,
  type EmbedDef,
  type EnumDef,
  type Field,
  type FieldType,
  type Literal,
  type Model,
  type Operation,
  type SchemaIR,
  type Validation,
} from './types.ts';
import { automationFromJson, automationToJson } from './snapshot-automation.ts';
import {
  asArray, asObject, asStrings, omitEmpty, ruleFromJson, ruleToJson, sameRule, typeFromJson, type Json, type JsonObject,
} from './snapshot-json.ts';

export {
  asArray, asObject, asStrings, omitEmpty, ruleFromJson, ruleToJson, sameRule, typeFromJson, type Json, type JsonObject,
} from './snapshot-json.ts';

/** Access when schema.ts says nothing; equal rules are omitted from the snapshot. */
export const DEFAULT_ACCESS: Readonly<Record<Operation, AccessRule>> = deepFreeze({
  read: { kind: 'authenticated' },
  create: { kind: 'roles', roles: ['Admin'] },
  update: { kind: 'roles', roles: ['Admin'] },
  delete: { kind: 'roles', roles: ['Admin'] },
});

// ---------------------------------------------------------------- to JSON

export function toSnapshot(ir: SchemaIR): unknown {
  return {
    version: ir.version,
    models: Object.fromEntries(ir.models.map((m) => [m.name, modelToJson(m)])),
    enums: Object.fromEntries(ir.enums.map((e) => [e.name, [...e.values]])),
    embeds: Object.fromEntries(ir.embeds.map((e) => [e.name, { fields: e.fields.map(fieldToJson) }])),
    ...automationToJson(ir),
  };
}

function modelToJson(model: Model): JsonObject {
  const access: JsonObject = {};
  for (const op of OPERATIONS) {
    if (!sameRule(model.access[op], DEFAULT_ACCESS[op])) access[op] = ruleToJson(model.access[op]);
  }
  return omitEmpty({
    table: model.table,
    fields: model.fields.map(fieldToJson),
    access,
    publicRead: model.publicRead ? { fields: [...model.publicRead.fields] } : null,
  });
}

function fieldToJson(field: Field): JsonObject {
  return omitEmpty({
    name: field.name,
    column: field.column,
    inputName: field.inputName === field.name ? null : field.inputName,
    type: typeToJson(field.type),
    required: field.required || null,
    validation: { ...field.validation } as JsonObject,
    default: field.default ?? null,
    unique: field.unique || null,
    index: field.index || null,
    sensitive: field.sensitive || null,
  });
}

function typeToJson(type: FieldType): JsonObject {
  if (type.kind === 'enum' && type.enum !== null) return { kind: 'enum', enum: type.enum };
  return JSON.parse(JSON.stringify(type)) as JsonObject;
}

// ---------------------------------------------------------------- from JSON

export function fromSnapshot(json: unknown): SchemaIR {
  const root = asObject(json, 'snapshot');
  if (root.version !== 1) throw new Error(`schema snapshot: unsupported version ${JSON.stringify(root.version)}`);
  const enumValues = new Map(Object.entries(asObject(root.enums ?? {}, 'enums')).map(([name, values]) => [name, asStrings(values, `enums.${name}`)]));
  const enums: EnumDef[] = [...enumValues].map(([name, values]) => ({ kind: 'enum', name, values }));
  const embeds: EmbedDef[] = Object.entries(asObject(root.embeds ?? {}, 'embeds')).map(([name, value]) => ({
    kind: 'embed',
    name,
    fields: asArray(asObject(value, `embeds.${name}`).fields, `embeds.${name}.fields`).map((f) => fieldFromJson(f, enumValues)),
  }));
  const models: Model[] = Object.entries(asObject(root.models ?? {}, 'models')).map(([name, value]) => modelFromJson(name, asObject(value, `models.${name}`), enumValues));
  const automation = automationFromJson(root, enumValues);
  return deepFreeze({ kind: 'schema', version: 1, models: sortByName(models), enums: sortByName(enums), embeds: sortByName(embeds), ...automation });
}

function modelFromJson(name: string, json: JsonObject, enumValues: ReadonlyMap<string, string[]>): Model {
  const accessJson = asObject(json.access ?? {}, `models.${name}.access`);
  const access = Object.fromEntries(OPERATIONS.map((op) => [op, op in accessJson ? ruleFromJson(accessJson[op], `${name}.${op}`) : DEFAULT_ACCESS[op]]));
  const publicRead = json.publicRead ? { fields: asStrings(asObject(json.publicRead, 'publicRead').fields, `models.${name}.publicRead.fields`) } : null;
  return {
    kind: 'model',
    name,
    table: String(json.table),
    fields: asArray(json.fields ?? [], `models.${name}.fields`).map((f) => fieldFromJson(f, enumValues)),
    access: access as Record<Operation, AccessRule>,
    publicRead,
  };
}

function fieldFromJson(value: Json, enumValues: ReadonlyMap<string, string[]>): Field {
  const json = asObject(value, 'field');
  const name = String(json.name);
  const field: Field = {
    kind: 'field',
    name,
    column: typeof json.column === 'string' ? json.column : null,
    inputName: typeof json.inputName === 'string' ? json.inputName : name,
    type: typeFromJson(asObject(json.type, `${name}.type`), enumValues),
    required: json.required === true,
    validation: { ...asObject(json.validation ?? {}, `${name}.validation`) } as Validation,
    unique: json.unique === true,
    index: json.index === true,
    sensitive: json.sensitive === true,
  };
  return json.default === undefined ? field : { ...field, default: json.default as Literal };
}

// ---------------------------------------------------------------- helpers

/** Sorted keys, 2-space indent, trailing newline: the on-disk form of every JSON file svc-gen writes. */
export function stableStringify(value: unknown): string {
  return `${JSON.stringify(sortKeys(value), null, 2)}\n`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    return Object.fromEntries(Object.keys(object).sort().map((key) => [key, sortKeys(object[key])]));
  }
  return value;
}

function sortByName<T extends { readonly name: string }>(items: T[]): T[] {
  return items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}
