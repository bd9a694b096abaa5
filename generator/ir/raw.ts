/**
 * Small readers over RawValue trees for the actions and workflows stages:
 * each reports a diagnostic with the node's line and returns null when the
 * value has the wrong shape, so a checker can go on and report the rest.
 */
import type { Field, Model } from '../../runtime/ir/types.ts';
import { SYSTEM_COLUMNS } from '../../runtime/ir/types.ts';
import type { TemplateValue } from '../../runtime/ir/automation.ts';
import { diagnostic, type Diagnostic, type DiagnosticCode } from '../diagnostics.ts';
import type { RawEntry, RawValue } from '../parse/index.ts';

export type RawObject = Extract<RawValue, { kind: 'object' }>;

export class Reporter {
  constructor(readonly diagnostics: Diagnostic[]) {}

  report(code: DiagnosticCode, node: { readonly at: RawValue['at'] }, message: string): null {
    this.diagnostics.push(diagnostic(code, node.at, message));
    return null;
  }

  object(value: RawValue, code: DiagnosticCode, what: string): RawObject | null {
    return value.kind === 'object' ? value : this.report(code, value, `${what} must be an object, not ${describe(value)}`);
  }

  array(value: RawValue, code: DiagnosticCode, what: string): readonly RawValue[] | null {
    return value.kind === 'array' ? value.items : this.report(code, value, `${what} must be an array, not ${describe(value)}`);
  }

  string(value: RawValue, code: DiagnosticCode, what: string): string | null {
    return value.kind === 'string' ? value.value : this.report(code, value, `${what} must be a string, not ${describe(value)}`);
  }

  /** Reports keys outside `allowed` (UNKNOWN_OPTION) and returns the entries by key. */
  entries(object: RawObject, allowed: readonly string[], what: string): Map<string, RawEntry> {
    const out = new Map<string, RawEntry>();
    for (const entry of object.entries) {
      if (!allowed.includes(entry.key)) this.report('UNKNOWN_OPTION', entry, `unknown option ${entry.key} in ${what} (expected ${allowed.join(', ')})`);
      else out.set(entry.key, entry);
    }
    return out;
  }
}

export function describe(value: RawValue): string {
  switch (value.kind) {
    case 'string':
      return `'${value.value}'`;
    case 'number':
    case 'boolean':
      return String(value.value);
    default:
      return `${value.kind === 'null' ? 'null' : `an ${value.kind}`}`;
  }
}

/** The plain JSON of a literal tree. */
export function toJson(value: RawValue): TemplateValue {
  switch (value.kind) {
    case 'null':
      return null;
    case 'array':
      return value.items.map(toJson);
    case 'object':
      return Object.fromEntries(value.entries.map((e) => [e.key, toJson(e.value)]));
    default:
      return value.value;
  }
}

/** Every string node of a tree (for template checks). */
export function strings(value: RawValue): Extract<RawValue, { kind: 'string' }>[] {
  if (value.kind === 'string') return [value];
  if (value.kind === 'array') return value.items.flatMap(strings);
  if (value.kind === 'object') return value.entries.flatMap((e) => strings(e.value));
  return [];
}

/** Names a record has in JSON: system fields and the input name of every stored field (`companyId`). */
export function jsonNames(model: Model): string[] {
  return [...SYSTEM_COLUMNS.map((c) => c.name), ...model.fields.filter((f) => f.column !== null).map((f) => f.inputName)];
}

/** A stored field by its schema name (`company`) or JSON name (`companyId`). */
export function storedField(model: Model, name: string): Field | undefined {
  return model.fields.find((f) => f.column !== null && (f.name === name || f.inputName === name));
}

export const IDENTIFIER = /^[A-Za-z][A-Za-z0-9_]*$/;
