/**
 * The next migration file: the diff between the previous snapshot and the
 * new IR, as readable SQL. Nothing to do -> no file. Destructive changes are
 * refused unless allowed, then marked `-- DESTRUCTIVE:` in the file.
 */
import type { SchemaIR } from '../../../runtime/ir/types.ts';
import { diagnostic, type Diagnostic, type Result, type SourceLocation } from '../../diagnostics.ts';
import { migrationFileName } from '../../ir/naming.ts';
import { render } from '../templates.ts';
import { destructiveReason, summarize, type Change } from './changes.ts';
import { convertChange } from './convert.ts';
import { diffSchemas } from './diff.ts';

export interface MigrationInput {
  readonly previous: SchemaIR | null;
  readonly next: SchemaIR;
  /** File names already in migrations/ (never rewritten). */
  readonly existing: readonly string[];
  readonly allowDestructive: boolean;
  readonly schemaFile: string;
  /** Where a model or field is declared in schema.ts (file:1 when it no longer is). */
  readonly locate: (model: string, field?: string) => SourceLocation;
}

export interface MigrationFile {
  readonly path: string;
  readonly content: string;
  readonly summary: readonly string[];
}

export function emitMigration(input: MigrationInput): Result<MigrationFile | null> {
  const changes = diffSchemas(input.previous, input.next);
  const diagnostics = refusals(changes, input);
  if (diagnostics.length > 0) return { ok: false, diagnostics };
  if (changes.length === 0) return { ok: true, value: null };
  const sequence = nextSequence(input.existing);
  const summary = changes.flatMap((c) => summarize(c) ?? []);
  const name = input.previous === null ? 'initial' : summary.length === 1 ? stripDetails(summary[0]) : `${stripDetails(summary[0])} and more`;
  const path = `migrations/${migrationFileName(sequence, name)}`;
  return { ok: true, value: { path, content: renderFile(sequence, summary, changes, input), summary } };
}

function refusals(changes: readonly Change[], input: MigrationInput): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const change of changes) {
    const at = locateChange(change, input);
    if (change.kind === 'addColumn' && change.field.required && change.field.default === undefined) {
      const where = `${change.model}.${change.field.name}`;
      out.push(diagnostic('REQUIRED_FIELD_NEEDS_DEFAULT', at, `required field ${where} is new on an existing model: add @default <value> (what existing rows get) or make it optional (${change.field.name}?)`));
    }
    const reason = destructiveReason(change);
    if (reason && !input.allowDestructive) {
      out.push(diagnostic('DESTRUCTIVE_CHANGE', at, `destructive change refused: ${reason}; rerun with --allow-destructive to emit it`));
    }
  }
  return out;
}

function locateChange(change: Change, input: MigrationInput): SourceLocation {
  if (change.kind === 'createTable' || change.kind === 'dropTable') return input.locate(change.model.name);
  return input.locate(change.model, change.field.name);
}

function renderFile(sequence: number, summary: readonly string[], changes: readonly Change[], input: MigrationInput): string {
  const tables = new Map(input.next.models.map((m) => [m.name, m.table]));
  const number = String(sequence).padStart(4, '0');
  const title = summary.length === 1 ? `svc-gen migration ${number}: ${summary[0]}` : `svc-gen migration ${number}:`;
  const blocks = changes.map((change) => {
    const reason = destructiveReason(change);
    return { lines: [...(reason ? [`-- DESTRUCTIVE: ${reason}`] : []), ...convertChange(change, tables)] };
  });
  return render('migration.sql', {
    schemaFile: input.schemaFile,
    title,
    details: summary.length === 1 ? [] : summary,
    blocks,
  });
}

function nextSequence(existing: readonly string[]): number {
  const numbers = existing.map((name) => /^(\d+)_/.exec(name)).filter((m) => m !== null).map((m) => Number(m[1]));
  return Math.max(0, ...numbers) + 1;
}

/** `add field Contact.vip (boolean, optional)` -> `add field Contact.vip` (for the file name). */
function stripDetails(summary: string): string {
  return summary.replace(/\s*[(:].*$/, '');
}
