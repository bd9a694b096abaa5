/** Raw fields of one interface -> IR fields (types resolved, tags applied, names derived). */
import { SYSTEM_COLUMNS, type Field } from '../../runtime/ir/types.ts';
import { diagnostic, type Diagnostic } from '../diagnostics.ts';
import type { RawField, RawInterface } from '../parse/index.ts';
import type { Declarations } from './declarations.ts';
import { resolveFieldType } from './field-type.ts';
import { columnName, inputName } from './naming.ts';
import { readTagFacts } from './tags.ts';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SYSTEM_NAMES = new Set<string>(SYSTEM_COLUMNS.flatMap((c) => [c.name, c.column]));

/** `renames` collects `Model.field` -> the name in its `@renamedFrom` (model fields only). */
export function buildFields(node: RawInterface, decls: Declarations, inEmbed: boolean, diagnostics: Diagnostic[], renames?: Map<string, string>): Field[] {
  const fields: Field[] = [];
  const names = new Map<string, string>();
  for (const raw of node.fields) {
    if (raw.name === 'id' && !inEmbed) continue;
    if (!IDENTIFIER.test(raw.name)) {
      diagnostics.push(diagnostic('UNSUPPORTED_DECLARATION', raw.at, `${node.name}: field name '${raw.name}' must be a plain identifier (letters, digits, _)`));
      continue;
    }
    const field = buildField(node, raw, decls, inEmbed, diagnostics, renames);
    if (!field) continue;
    if (!inEmbed && SYSTEM_NAMES.has(field.name)) {
      diagnostics.push(diagnostic('RESERVED_FIELD', raw.at, `${node.name}.${raw.name} is a system field every model already has; rename it`));
      continue;
    }
    if (claimNames(node.name, raw, field, names, diagnostics)) fields.push(field);
  }
  return fields;
}

function buildField(node: RawInterface, raw: RawField, decls: Declarations, inEmbed: boolean, diagnostics: Diagnostic[], renames?: Map<string, string>): Field | null {
  const owner = node.name;
  const where = `${owner}.${raw.name}`;
  const resolved = resolveFieldType(raw, decls, inEmbed);
  if (!resolved.ok) {
    diagnostics.push(diagnostic(resolved.code, raw.at, `${resolved.problem} on ${where}${resolved.hint ? ` (${resolved.hint})` : ''}`));
    return null;
  }
  const { type } = resolved;
  const facts = readTagFacts(raw.tags, type, where, diagnostics);
  if (facts.renamedFrom !== undefined) checkRename(node, raw, facts.renamedFrom, inEmbed, diagnostics, renames);
  const belongsTo = type.kind === 'belongsTo';
  return {
    kind: 'field',
    name: raw.name,
    column: inEmbed || type.kind === 'hasMany' ? null : columnName(raw.name, belongsTo),
    inputName: inEmbed ? raw.name : inputName(raw.name, belongsTo),
    type,
    required: type.kind === 'hasMany' ? false : !raw.optional,
    validation: facts.validation,
    ...(facts.default === undefined ? {} : { default: facts.default }),
    unique: facts.unique,
    index: facts.index,
    sensitive: facts.sensitive,
  };
}

/** A rename names a field that no longer exists, on a model (embedded blocks have no columns to move). */
function checkRename(node: RawInterface, raw: RawField, from: string, inEmbed: boolean, diagnostics: Diagnostic[], renames?: Map<string, string>): void {
  const at = raw.tags.find((t) => t.name === 'renamedFrom')?.at ?? raw.at;
  const where = `${node.name}.${raw.name}`;
  if (inEmbed || !renames) diagnostics.push(diagnostic('TAG_NOT_APPLICABLE', at, `@renamedFrom on ${where}: applies only to fields of a model`));
  else if (from === raw.name) diagnostics.push(diagnostic('BAD_TAG_VALUE', at, `@renamedFrom on ${where}: names the field itself`));
  else if (node.fields.some((f) => f.name === from)) diagnostics.push(diagnostic('BAD_TAG_VALUE', at, `@renamedFrom on ${where}: ${node.name}.${from} is still declared; remove it to rename`));
  else renames.set(where, from);
}

/** Two fields must not share a column or a JSON name (e.g. `companyId` next to `company: Company`). */
function claimNames(owner: string, raw: RawField, field: Field, taken: Map<string, string>, diagnostics: Diagnostic[]): boolean {
  const keys = [...new Set([field.name, field.inputName, ...(field.column ? [`column:${field.column}`] : [])])];
  const clash = keys.map((k) => taken.get(k)).find((other) => other !== undefined);
  if (clash) {
    const code = clash === field.name ? 'DUPLICATE_FIELD' : 'NAME_CLASH';
    diagnostics.push(diagnostic(code, raw.at, `${owner}.${raw.name} clashes with ${owner}.${clash} (same field, column or input name)`));
    return false;
  }
  keys.forEach((k) => taken.set(k, field.name));
  return true;
}
