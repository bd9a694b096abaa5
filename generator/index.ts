/**
 * The generator's programmatic API. The CLI (and the runtime's dev watcher)
 * call these; they return data and never print or exit.
 *
 *   schema.ts --parse--> raw facts --ir--> SchemaIR --emit--> files --write--> DIR
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import { fromSnapshot } from '../runtime/ir/snapshot.ts';
import type { SchemaIR } from '../runtime/ir/types.ts';
import { diagnostic, formatDiagnostic, type Diagnostic, type SourceLocation } from './diagnostics.ts';
import { emitProject } from './emit/index.ts';
import { placedRuntimeTables, type Target } from './emit/citus.ts';
import { CURRENT_LAYOUT, LAYOUTS, type Layout } from './emit/migrate/index.ts';
import { buildIR } from './ir/index.ts';
import { packageSlug } from './ir/naming.ts';
import { parseSchemaSource } from './parse/index.ts';
import { applyWrite, planWrite, readDirState, type DirState, type FileStatus } from './write.ts';

export { formatDiagnostic };
export type { Diagnostic, FileStatus };

export interface BuildOptions {
  readonly schemaPath: string;
  readonly outDir: string;
  /** Write nothing; report what is stale. */
  readonly check?: boolean;
  /** Emit destructive migrations (drops, type changes) instead of refusing them. */
  readonly allowDestructive?: boolean;
  /** package.json name is `<name>-service`; default: the schema file's folder name. */
  readonly name?: string;
  /** `citus`: add the migration that distributes the tables (generator/emit/citus.ts); default `postgres`. */
  readonly target?: Target;
}

export type BuildResult =
  | {
      readonly ok: true;
      /** Relative paths written (added or changed); empty for a passing --check. */
      readonly written: readonly string[];
      readonly unchanged: readonly string[];
      /** Relative paths deleted (projections and untouched stubs of removed models). */
      readonly removed: readonly string[];
      /** The migration this build added, with its changes in words (the expand half of a pair). */
      readonly migration: { readonly path: string; readonly summary: readonly string[] } | null;
      /** The contract half (drops, old columns), applied by the runner once no older build runs. */
      readonly contract: { readonly path: string; readonly summary: readonly string[] } | null;
    }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] }
  | {
      readonly ok: false;
      /** --check: relative paths that build would add, change or remove. */
      readonly stale: readonly string[];
      readonly details: readonly { readonly path: string; readonly status: FileStatus }[];
    };

export type ParseResult =
  | {
      readonly ok: true;
      readonly ir: SchemaIR;
      readonly source: string;
      readonly locate: (model: string, field?: string) => SourceLocation;
      /** `Model.field` -> the field name it was renamed from (`@renamedFrom`). */
      readonly renames: ReadonlyMap<string, string>;
    }
  | { readonly ok: false; readonly diagnostics: readonly Diagnostic[] };

/** Reads and checks a schema file without writing anything. */
export async function parseSchemaFile(schemaPath: string): Promise<ParseResult> {
  const file = displayPath(schemaPath);
  let source: string;
  try {
    source = await readFile(schemaPath, 'utf8');
  } catch (error) {
    return { ok: false, diagnostics: [diagnostic('SCHEMA_UNREADABLE', { file, line: 1 }, `cannot read schema: ${(error as Error).message}`)] };
  }
  return parseSchemaText(source, file);
}

/** `file` names the schema in diagnostics. */
export function parseSchemaText(source: string, file: string): ParseResult {
  const built = buildIR(parseSchemaSource(source, file));
  if (!built.ok) return built;
  const { ir, locations, renames } = built.value;
  const locate = (model: string, field?: string) => locations.get(field ? `${model}.${field}` : model) ?? locations.get(model) ?? { file, line: 1 };
  return { ok: true, ir, source, locate, renames };
}

export async function build(options: BuildOptions): Promise<BuildResult> {
  const parsed = await parseSchemaFile(options.schemaPath);
  if (!parsed.ok) return parsed;
  const state = await readDirState(options.outDir);
  const previous = previousSnapshot(state, options.outDir);
  if ('diagnostics' in previous) return { ok: false, diagnostics: previous.diagnostics };
  const target = options.target ?? 'postgres';
  if (previous.target === 'citus' && target !== 'citus') {
    const message = `${displayPath(options.outDir)} was built with --target citus (schema.snapshot.json says so): its tables are distributed; build it with --target citus`;
    return { ok: false, diagnostics: [diagnostic('TARGET_CHANGED', { file: displayPath(resolve(options.outDir, 'schema.snapshot.json')), line: 1 }, message)] };
  }
  const emitted = emitProject({
    ir: parsed.ir,
    schemaSource: parsed.source,
    schemaFile: 'schema.ts',
    name: options.name ?? packageSlug(basename(dirname(resolve(options.schemaPath)))),
    previous: {
      snapshot: previous.ir, layout: previous.layout, migrations: state.migrations, managed: state.managed, target: previous.target,
      citusPlaced: placedRuntimeTables(state.citusMigrations.values()),
    },
    allowDestructive: options.allowDestructive ?? false,
    renames: parsed.renames,
    locate: parsed.locate,
    target,
  });
  if (!emitted.ok) return emitted;
  const { files, obsolete, migration, contract } = emitted.value;
  const plan = await planWrite(options.outDir, files, obsolete);
  if (options.check) {
    if (plan.changes.length > 0) return { ok: false, stale: plan.changes.map((c) => c.path), details: plan.changes };
    return { ok: true, written: [], unchanged: plan.unchanged, removed: [], migration: null, contract: null };
  }
  await applyWrite(options.outDir, files, plan);
  const written = plan.changes.filter((c) => c.status !== 'remove').map((c) => c.path);
  const removed = plan.changes.filter((c) => c.status === 'remove').map((c) => c.path);
  return { ok: true, written, unchanged: plan.unchanged, removed, migration, contract };
}

type Previous = { ir: SchemaIR | null; layout: Layout; target?: Target };

function previousSnapshot(state: DirState, outDir: string): Previous | { diagnostics: Diagnostic[] } {
  const file = displayPath(resolve(outDir, 'schema.snapshot.json'));
  if (state.snapshotText === null) {
    if (state.migrations.length === 0) return { ir: null, layout: CURRENT_LAYOUT };
    const message = `${displayPath(outDir)}/migrations has files but schema.snapshot.json is missing; restore it from version control`;
    return { diagnostics: [diagnostic('BAD_SNAPSHOT', { file, line: 1 }, message)] };
  }
  try {
    const json = JSON.parse(state.snapshotText) as { layout?: unknown; target?: unknown };
    return { ir: fromSnapshot(json), layout: snapshotLayout(json.layout), target: json.target === 'citus' ? 'citus' : 'postgres' };
  } catch (error) {
    return { diagnostics: [diagnostic('BAD_SNAPSHOT', { file, line: 1 }, `cannot read the previous snapshot: ${(error as Error).message}`)] };
  }
}

/** Snapshots written before index layouts existed have none: layout 1. */
function snapshotLayout(value: unknown): Layout {
  if (value === undefined) return 1;
  const known = LAYOUTS.find((layout) => layout === value);
  if (known !== undefined) return known;
  throw new Error(`unsupported index layout ${JSON.stringify(value)} (this svc-gen knows ${LAYOUTS.join(', ')})`);
}

/** Paths in messages: relative to the working directory when below it. */
function displayPath(path: string): string {
  const rel = relative(process.cwd(), resolve(path));
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}
