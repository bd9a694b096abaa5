/**
 * Stage 2: raw facts -> the frozen SchemaIR. Every decision lives here or in
 * the modules it calls: which interface is a model, defaults, names, checks.
 */
import { RUNTIME_TABLE_PREFIX, type EmbedDef, type EnumDef, type Model, type SchemaIR } from '../../runtime/ir/types.ts';
import { diagnostic, sortDiagnostics, type Diagnostic, type Result, type SourceLocation } from '../diagnostics.ts';
import type { RawInterface, RawModelOptions, RawSchema } from '../parse/index.ts';
import { buildAccess, buildPublicRead } from './access.ts';
import { buildAutomation } from './automation.ts';
import { collectDeclarations, type Declarations } from './declarations.ts';
import { buildFields } from './fields.ts';
import { projectionTableName, tableName } from './naming.ts';
import { linkInverses } from './relations.ts';

export interface BuiltSchema {
  readonly ir: SchemaIR;
  /** Where each model (`Contact`) and field (`Contact.email`) is declared; kept out of the IR. */
  readonly locations: ReadonlyMap<string, SourceLocation>;
  /** `Contact.fullName` -> `name` for `@renamedFrom("name")`: migration input only, kept out of the IR. */
  readonly renames: ReadonlyMap<string, string>;
}

export function buildIR(raw: RawSchema): Result<BuiltSchema> {
  const diagnostics: Diagnostic[] = [...raw.diagnostics];
  const decls = collectDeclarations(raw, diagnostics);
  const options = collectOptions(raw, decls, diagnostics);
  const renames = new Map<string, string>();
  const models = [...decls.models.values()].map((node) => buildModel(node, decls, options.get(node.name), diagnostics, renames));
  checkTables(models, decls, diagnostics);
  const linked = linkInverses(models, decls.models, diagnostics);
  const enums: EnumDef[] = [...decls.enums.values()].map((e) => ({ kind: 'enum', name: e.name, values: e.values }));
  const embeds: EmbedDef[] = [...decls.embeds.values()].map((node) => ({ kind: 'embed', name: node.name, fields: buildFields(node, decls, true, diagnostics) }));
  const automation = buildAutomation(raw, linked, enums, [...options.values()], diagnostics);
  if (diagnostics.length > 0) return { ok: false, diagnostics: sortDiagnostics(diagnostics) };
  const ir: SchemaIR = { kind: 'schema', version: 1, models: byName(linked), enums: byName(enums), embeds: byName(embeds), ...automation };
  return { ok: true, value: { ir: deepFreeze(ir), locations: locationsOf(decls), renames } };
}

function locationsOf(decls: Declarations): Map<string, SourceLocation> {
  const out = new Map<string, SourceLocation>();
  for (const node of decls.models.values()) {
    out.set(node.name, node.at);
    for (const field of node.fields) out.set(`${node.name}.${field.name}`, field.at);
  }
  return out;
}

function buildModel(node: RawInterface, decls: Declarations, options: RawModelOptions | undefined, diagnostics: Diagnostic[], renames: Map<string, string>): Model {
  checkId(node, diagnostics);
  const fields = buildFields(node, decls, false, diagnostics, renames);
  return {
    kind: 'model',
    name: node.name,
    table: tableName(node.name),
    fields,
    access: buildAccess(node.name, options, diagnostics),
    publicRead: buildPublicRead(node.name, options, fields, diagnostics),
  };
}

function checkId(node: RawInterface, diagnostics: Diagnostic[]): void {
  const id = node.fields.find((f) => f.name === 'id');
  if (!id) return;
  const isString = id.type.kind === 'keyword' && id.type.keyword === 'string' && !id.type.array;
  if (!isString || id.optional || id.tags.length > 0) {
    diagnostics.push(diagnostic('BAD_ID_FIELD', id.at, `${node.name}.id must be written \`id: string\` (the runtime assigns a ULID)`));
  }
}

/** Options by model name; entries for names that are not models are reported. */
function collectOptions(raw: RawSchema, decls: Declarations, diagnostics: Diagnostic[]): Map<string, RawModelOptions> {
  const out = new Map<string, RawModelOptions>();
  for (const entry of raw.models) {
    if (out.has(entry.name)) {
      diagnostics.push(diagnostic('DUPLICATE_DECLARATION', entry.at, `model ${entry.name} appears twice in defineSchema models`));
    } else if (!decls.models.has(entry.name)) {
      const hint = decls.embeds.has(entry.name) ? 'is an embedded block (no id field)' : 'is not declared as an exported interface with an id';
      diagnostics.push(diagnostic('UNDECLARED_MODEL', entry.at, `defineSchema models lists ${entry.name}, which ${hint}`));
    } else out.set(entry.name, entry);
  }
  return out;
}

/** Tables (and their projections) must be distinct and outside the runtime's `svc_` namespace. */
function checkTables(models: readonly Model[], decls: Declarations, diagnostics: Diagnostic[]): void {
  const owners = new Map<string, string>();
  for (const model of models) {
    const at = decls.models.get(model.name)!.at;
    if (model.table.startsWith(RUNTIME_TABLE_PREFIX)) {
      diagnostics.push(diagnostic('RESERVED_TABLE', at, `model ${model.name} maps to table ${model.table}; names starting with ${RUNTIME_TABLE_PREFIX} are reserved for the runtime`));
    }
    for (const table of [model.table, projectionTableName(model.table)]) {
      const other = owners.get(table);
      if (other) diagnostics.push(diagnostic('NAME_CLASH', at, `model ${model.name} and model ${other} both need the table ${table}; rename one`));
      else owners.set(table, model.name);
    }
  }
}

function byName<T extends { readonly name: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}
