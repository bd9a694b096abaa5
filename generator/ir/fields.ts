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

export function buildFields(node: RawInterface, decls: Declarations, inEmbed: boolean, diagnostics: Diagnostic[]): Field[] {
  const fields: Field[] = [];
  const names = new Map<string, string>();
  for (const raw of node.fields) {
    if (raw.name === 'id' && !inEmbed) continue;
    if (!IDENTIFIER.test(raw.name)) {
      diagnostics.push(diagnostic('UNSUPPORTED_DECLARATION', raw.at, `${node.name}: field name '${raw.name}' must be a plain identifier (letters, digits, _)`));
      continue;
    }
    const field = buildField(node.name, raw, decls, inEmbed, diagnostics);
    if (!field) continue;
    if (!inEmbed && SYSTEM_NAMES.has(field.name)) {
      diagnostics.push(diagnostic('RESERVED_FIELD', raw.at, `${node.name}.${raw.name} is a system field every model already has; rename it`));
      continue;
    }
    if (claimNames(node.name, raw, field, names, diagnostics)) fields.push(field);
  }
  return fields;
}

function buildField(owner: string, raw: RawField, decls: Declarations, inEmbed: boolean, diagnostics: Diagnostic[]): Field | null {
  const where = `${owner}.${raw.name}`;
  const resolved = resolveFieldType(raw, decls, inEmbed);
  if (!resolved.ok) {
    diagnostics.push(diagnostic(resolved.code, raw.at, `${resolved.problem} on ${where}${resolved.hint ? ` (${resolved.hint})` : ''}`));
    return null;
  }
  const { type } = resolved;
  const facts = readTagFacts(raw.tags, type, where, diagnostics);
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
