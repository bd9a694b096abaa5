/**
 * The next migration files: the diff between the previous snapshot and the
 * new IR, as readable SQL in steps (steps.ts). Nothing to do -> no file.
 * Changes that remove what old instances still use (drops, the old column of
 * a renamed or retyped field) go to a second file, the contract, which the
 * runner applies only once no older build runs. Destructive changes are
 * refused unless allowed, then marked `-- DESTRUCTIVE:` in the header.
 */
import type { Model, SchemaIR } from '../../../runtime/ir/types.ts';
import { diagnostic, type Diagnostic, type Result, type SourceLocation } from '../../diagnostics.ts';
import { migrationFileName } from '../../ir/naming.ts';
import { render } from '../templates.ts';
import { CONTRACT, destructiveReason, summarize, type Change } from './changes.ts';
import { convertChange } from './convert.ts';
import { diffSchemas } from './diff.ts';
import type { Layout } from './indexes.ts';
import { stepLine, type Step } from './steps.ts';

export { CURRENT_LAYOUT, LAYOUTS, type Layout } from './indexes.ts';
export { placeColumns } from './columns.ts';

export interface MigrationInput {
  readonly previous: SchemaIR | null;
  /** The index layout of the previous snapshot (1 when it names none). */
  readonly previousLayout: Layout;
  readonly next: SchemaIR;
  /** `Model.field` -> the name it was renamed from (`@renamedFrom`). */
  readonly renames: ReadonlyMap<string, string>;
  /** File names already in migrations/ (never rewritten). */
  readonly existing: readonly string[];
  readonly allowDestructive: boolean;
  readonly schemaFile: string;
  /** Where a model or field is declared in schema.ts (file:1 when it no longer is). */
  readonly locate: (model: string, field?: string) => SourceLocation;
  /** Steps a target adds around new tables (`--target citus` on a distributed project); none by default. */
  readonly newTables?: NewTableSteps;
}

/**
 * What a target adds to the file that creates new tables (generator/emit/citus.ts):
 * its steps run right after each new table's `create table`, so before every
 * foreign key to or from it (those come later in the same file, PHASE).
 */
export interface NewTableSteps {
  /** Before every other step of the file (a preflight). */
  readonly first: readonly Step[];
  /** Right after the `create table` of `model`. */
  readonly after: (model: Model) => readonly Step[];
  /** Lines for the header, after the changes' (the file name keeps naming the changes only). */
  readonly details: (models: readonly Model[]) => readonly string[];
}

export interface MigrationFile {
  readonly path: string;
  readonly content: string;
  readonly summary: readonly string[];
}

/** The expand (or only) file, then the contract file when there is one. */
export function emitMigrations(input: MigrationInput): Result<MigrationFile[]> {
  const changes = diffSchemas(input);
  const diagnostics = [...renameProblems(input), ...refusals(changes, input)];
  if (diagnostics.length > 0) return { ok: false, diagnostics };
  const expand = changes.filter((c) => !CONTRACT[c.kind]);
  const contract = changes.filter((c) => CONTRACT[c.kind]);
  const first = nextSequence(input.existing);
  const files: MigrationFile[] = [];
  if (expand.length > 0) files.push(migrationFile(first, expand, input, contract.length > 0 ? { contractIn: first + 1 } : {}));
  if (contract.length > 0) files.push(migrationFile(first + files.length, contract, input, { contractOf: first + files.length - 1 }));
  return { ok: true, value: files };
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

/**
 * A `@renamedFrom` whose old name and new name both exist in the previous
 * snapshot (a swap, or a name reused) cannot say which column holds what.
 */
function renameProblems(input: MigrationInput): Diagnostic[] {
  const before = new Map((input.previous?.models ?? []).map((m) => [m.name, new Set(m.fields.map((f) => f.name))]));
  return [...input.renames].flatMap(([where, from]) => {
    const [model, field] = where.split('.');
    const names = before.get(model);
    if (!names?.has(field) || !names.has(from)) return [];
    const message = `@renamedFrom("${from}") on ${where}: the previous schema has both ${model}.${from} and ${where}; rename one field per build (remove the tag once built)`;
    return [diagnostic('BAD_TAG_VALUE', input.locate(model, field), message)];
  });
}

function locateChange(change: Change, input: MigrationInput): SourceLocation {
  if (change.kind === 'createTable' || change.kind === 'dropTable') return input.locate(change.model.name);
  if (change.kind === 'addIndex' || change.kind === 'dropIndex') return input.locate(change.model, change.index.field?.name);
  if ('field' in change) return input.locate(change.model, change.field.name);
  return input.locate(change.model);
}

const pad = (n: number) => String(n).padStart(4, '0');

function migrationFile(sequence: number, changes: readonly Change[], input: MigrationInput, pair: { contractIn?: number; contractOf?: number }): MigrationFile {
  const named = changes.flatMap((c) => summarize(c) ?? []);
  const first = named[0] ?? 'change';
  const name = input.previous === null ? 'initial' : `${pair.contractOf === undefined ? '' : 'contract '}${stripDetails(first)}${named.length > 1 ? ' and more' : ''}`;
  const path = `migrations/${migrationFileName(sequence, name)}`;
  const created = input.previous === null ? [] : changes.flatMap((c) => (c.kind === 'createTable' ? [c.model] : []));
  const around = created.length > 0 ? input.newTables : undefined;
  const summary = around ? [...named, ...around.details(created)] : named;
  return { path, content: renderFile(sequence, summary, changes, input, pair, around), summary };
}

function renderFile(sequence: number, summary: readonly string[], changes: readonly Change[], input: MigrationInput, pair: { contractIn?: number; contractOf?: number }, around: NewTableSteps | undefined): string {
  const tables = new Map(input.next.models.map((m) => [m.name, m.table]));
  const number = pad(sequence);
  const converted = changes.flatMap((change) => {
    const steps = convertChange(change, tables);
    return around && change.kind === 'createTable' ? [...steps, ...around.after(change.model)] : steps;
  });
  const steps = around ? [...around.first, ...converted] : converted;
  const destructive = changes.flatMap((c) => destructiveReason(c) ?? []);
  // The first migration creates empty tables only: one transaction, as every migration was before steps existed.
  const stepped = input.previous !== null;
  return render('migration.sql', {
    schemaFile: input.schemaFile,
    contractOf: pair.contractOf === undefined ? null : `-- contract of ${pad(pair.contractOf)}: ${summary.join('; ')}`,
    title: summary.length === 1 ? `svc-gen migration ${number}: ${summary[0]}` : `svc-gen migration ${number}:`,
    details: summary.length === 1 ? [] : summary,
    contractIn: pair.contractIn === undefined ? null : `-- expand: ${pad(pair.contractIn)} is its contract, applied once no instance runs an older build`,
    destructive: destructive.map((reason) => `-- DESTRUCTIVE: ${reason}`),
    steps: steps.map((step, i) => ({ line: stepped ? stepLine(step, i + 1) : null, sql: step.sql })),
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
