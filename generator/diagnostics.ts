/**
 * Problems in the operator's schema are data, not exceptions: each carries a
 * stable code and the file and line to fix. Bugs in svc-gen are thrown.
 */

export const DIAGNOSTIC_CODES = [
  'SYNTAX_ERROR',
  'NOT_LITERAL',
  'UNKNOWN_TAG',
  'BAD_TAG_VALUE',
  'TAG_NOT_APPLICABLE',
  'BAD_DEFAULT',
  'UNSUPPORTED_TYPE',
  'UNSUPPORTED_DECLARATION',
  'RELATION_TARGET_MISSING',
  'MISSING_INVERSE',
  'AMBIGUOUS_INVERSE',
  'UNKNOWN_ROLE',
  'UNKNOWN_OPERATION',
  'UNKNOWN_OPTION',
  'BAD_ACCESS_RULE',
  'DUPLICATE_DECLARATION',
  'DUPLICATE_FIELD',
  'UNDECLARED_MODEL',
  'UNKNOWN_PUBLIC_FIELD',
  'RESERVED_TABLE',
  'RESERVED_FIELD',
  'NAME_CLASH',
  'BAD_ID_FIELD',
  // actions and workflows (CONTRACT sections 11 and 12)
  'BAD_NAME',
  'BAD_ACTION',
  'BAD_INPUT_TYPE',
  'BAD_BINDING',
  'UNKNOWN_ACTION',
  'UNKNOWN_MODEL',
  'UNKNOWN_FIELD',
  'UNKNOWN_EVENT',
  'UNKNOWN_CONDITION',
  'BAD_CONDITION',
  'BAD_WORKFLOW',
  'BAD_TRIGGER',
  'BAD_CRON',
  'BAD_TIMEZONE',
  'UNKNOWN_STEP_KIND',
  'BAD_STEP',
  'DUPLICATE_STEP',
  'BAD_TEMPLATE',
  'BAD_FAILURE_POLICY',
  'REQUIRED_FIELD_NEEDS_DEFAULT',
  'DESTRUCTIVE_CHANGE',
  'BAD_SNAPSHOT',
  'TARGET_CHANGED',
  'SCHEMA_UNREADABLE',
] as const;

export type DiagnosticCode = (typeof DIAGNOSTIC_CODES)[number];

export interface Diagnostic {
  readonly code: DiagnosticCode;
  /** One line, no trailing period, e.g. `unknown tag @foo on Contact.name`. */
  readonly message: string;
  readonly file: string;
  /** 1-based; 1 when the problem is not tied to a line. */
  readonly line: number;
}

export interface SourceLocation {
  readonly file: string;
  readonly line: number;
}

export function diagnostic(code: DiagnosticCode, at: SourceLocation, message: string): Diagnostic {
  return { code, message, file: at.file, line: at.line };
}

/** `schema.ts:12: unknown tag @foo on Contact.name` */
export function formatDiagnostic(d: Diagnostic): string {
  return `${d.file}:${d.line}: ${d.message}`;
}

export type Result<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

export function sortDiagnostics(list: readonly Diagnostic[]): Diagnostic[] {
  return [...list].sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.message.localeCompare(b.message));
}
