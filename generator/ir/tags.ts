/**
 * Field tags -> validation and storage facts. Each tag checks that it fits the
 * field's type; a misfit is a diagnostic on the tag's own line.
 */
import type { FieldType, Literal, Validation } from '../../runtime/ir/types.ts';
import type { FieldTag } from '../../schema/index.ts';
import { diagnostic, type Diagnostic } from '../diagnostics.ts';
import type { RawTag } from '../parse/index.ts';
import { fitDefault } from './literal.ts';

export interface TagFacts {
  readonly validation: Validation;
  readonly default?: Literal;
  readonly unique: boolean;
  readonly index: boolean;
  /** `@sensitive`: the audit log redacts the field's values. */
  readonly sensitive: boolean;
  /** `@renamedFrom("old")`: the field was called `old`; the next migration moves its data (expand/contract). */
  readonly renamedFrom?: string;
}

/** Documentation tags that carry no meaning for svc-gen but are not mistakes. */
const DOC_TAGS = new Set(['see', 'deprecated', 'example', 'remarks', 'description']);

type Handler = (tag: RawTag, type: FieldType, facts: MutableFacts) => string | null;
type MutableFacts = { validation: { -readonly [K in keyof Validation]: Validation[K] }; default?: Literal; unique: boolean; index: boolean; sensitive: boolean; renamedFrom?: string };

const isString = (t: FieldType) => t.kind === 'scalar' && t.scalar === 'string';
const isColumnar = (t: FieldType) => t.kind === 'scalar' || t.kind === 'enum' || t.kind === 'belongsTo' || t.kind === 'media';
const hasLength = (t: FieldType) => isString(t) || t.kind === 'list' || (t.kind === 'embed' && t.list);

const flag = (applies: (t: FieldType) => boolean, what: string, set: (f: MutableFacts) => void): Handler => (tag, type, facts) => {
  if (tag.value !== '') return `takes no value (found "${tag.value}")`;
  if (!applies(type)) return `applies only to ${what}`;
  set(facts);
  return null;
};

const bound = (key: 'min' | 'max'): Handler => (tag, type, facts) => {
  const value = Number(tag.value);
  if (tag.value === '' || !Number.isFinite(value)) return `needs a number (found "${tag.value}")`;
  const isNumber = type.kind === 'scalar' && type.scalar === 'number';
  if (!isNumber && !hasLength(type)) return 'applies only to number, string and list fields';
  if (!isNumber && (!Number.isInteger(value) || value < 0)) return 'is a length on a string or list and must be a whole number >= 0';
  facts.validation[key] = value;
  return null;
};

/** One handler per tag the schema language documents (schema/index.ts `FieldTag`). */
const HANDLERS: Record<FieldTag, Handler> = {
  email: flag(isString, 'string fields', (f) => (f.validation.email = true)),
  min: bound('min'),
  max: bound('max'),
  numeric: flag(isString, 'string fields', (f) => (f.validation.numeric = true)),
  default: (tag, type, facts) => {
    if (tag.value === '') return 'needs a value';
    const fit = fitDefault(tag.value, type);
    if ('problem' in fit) return `${tag.value} does not fit: ${fit.problem}`;
    facts.default = fit.value;
    return null;
  },
  unique: flag(isColumnar, 'scalar, enum and belongsTo fields', (f) => (f.unique = true)),
  index: flag(isColumnar, 'scalar, enum and belongsTo fields', (f) => (f.index = true)),
  sensitive: flag(() => true, 'any field', (f) => (f.sensitive = true)),
  renamedFrom: (tag, type, facts) => {
    const name = /^\(?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1\s*\)?$/.exec(tag.value)?.[2];
    if (!name) return `needs the field's previous name, e.g. @renamedFrom("oldName") (found "${tag.value}")`;
    if (!isColumnar(type) && type.kind !== 'embed' && type.kind !== 'list') return 'applies only to fields stored in a column';
    facts.renamedFrom = name;
    return null;
  },
};

const KNOWN = Object.keys(HANDLERS).map((t) => `@${t}`).join(' ');

const CODE_FOR: Record<string, Diagnostic['code']> = { default: 'BAD_DEFAULT' };

export function readTagFacts(tags: readonly RawTag[], type: FieldType, owner: string, diagnostics: Diagnostic[]): TagFacts {
  const facts: MutableFacts = { validation: {}, unique: false, index: false, sensitive: false };
  const seen = new Set<string>();
  for (const tag of tags) {
    if (DOC_TAGS.has(tag.name)) continue;
    const handler = Object.hasOwn(HANDLERS, tag.name) ? HANDLERS[tag.name as FieldTag] : undefined;
    if (!handler) {
      diagnostics.push(diagnostic('UNKNOWN_TAG', tag.at, `unknown tag @${tag.name} on ${owner} (known: ${KNOWN})`));
      continue;
    }
    if (seen.has(tag.name)) {
      diagnostics.push(diagnostic('BAD_TAG_VALUE', tag.at, `@${tag.name} appears twice on ${owner}`));
      continue;
    }
    seen.add(tag.name);
    const problem = handler(tag, type, facts);
    if (problem) diagnostics.push(diagnostic(codeOf(tag.name, problem), tag.at, `@${tag.name} on ${owner}: ${problem}`));
  }
  checkRange(facts, tags, owner, diagnostics);
  return facts;
}

function codeOf(tag: string, problem: string): Diagnostic['code'] {
  if (CODE_FOR[tag]) return CODE_FOR[tag];
  return problem.startsWith('applies only') ? 'TAG_NOT_APPLICABLE' : 'BAD_TAG_VALUE';
}

function checkRange(facts: MutableFacts, tags: readonly RawTag[], owner: string, diagnostics: Diagnostic[]): void {
  const { min, max } = facts.validation;
  const at = tags.find((t) => t.name === 'max')?.at ?? tags[0]?.at;
  if (min !== undefined && max !== undefined && min > max && at) {
    diagnostics.push(diagnostic('BAD_TAG_VALUE', at, `@min ${min} is greater than @max ${max} on ${owner}`));
  }
  const value = facts.default;
  const size = typeof value === 'string' ? value.length : typeof value === 'number' ? value : undefined;
  const defaultAt = tags.find((t) => t.name === 'default')?.at;
  if (size === undefined || !defaultAt || typeof value === 'boolean') return;
  if ((min !== undefined && size < min) || (max !== undefined && size > max)) {
    diagnostics.push(diagnostic('BAD_DEFAULT', defaultAt, `@default ${JSON.stringify(value)} is outside @min/@max on ${owner}`));
  }
}
