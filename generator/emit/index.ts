/**
 * Stage 3: IR (+ what DIR already holds) -> every file of the generated
 * project as a Map<relativePath, content>. Pure: no clock, no file system.
 */
import { toSnapshot, stableStringify } from '../../runtime/ir/snapshot.ts';
import type { SchemaIR } from '../../runtime/ir/types.ts';
import type { Result, SourceLocation } from '../diagnostics.ts';
import { emitAccess } from './access.ts';
import { emitActions } from './actions.ts';
import { citusNewTables, emitCitusMigration, type Target } from './citus.ts';
import { emitClient } from './client.ts';
import { GENERATED_MARKER } from './header.ts';
import { CURRENT_LAYOUT, emitMigrations, placeColumns, type Layout } from './migrate/index.ts';
import { emitModels } from './models.ts';
import { emitGitignore, emitPackageJson, emitServer, emitTsconfig } from './project.ts';
import { emitProjections } from './projections.ts';
import { emitCustomProjections, emitResolverIndex, emitStubs, obsoleteStubs } from './resolvers.ts';
import { emitWorkflows } from './workflows.ts';

/** What DIR holds before the build, as read by write.ts. */
export interface PreviousOutput {
  /** The IR of DIR/schema.snapshot.json; null for a first build. */
  readonly snapshot: SchemaIR | null;
  /** The snapshot's index layout (`layout`; 1 when absent). */
  readonly layout: Layout;
  /** File names in DIR/migrations. */
  readonly migrations: readonly string[];
  /** Contents of DIR/projections/* and DIR/resolvers/* by relative path. */
  readonly managed: ReadonlyMap<string, string>;
  /** The snapshot's `target` (`postgres` when absent). */
  readonly target?: Target;
  /** The runtime tables the project's distribution files placed (citus.ts `placedRuntimeTables`). */
  readonly citusPlaced?: ReadonlySet<string>;
}

export interface EmitInput {
  readonly ir: SchemaIR;
  /** schema.ts text, copied verbatim. */
  readonly schemaSource: string;
  /** How generated headers name the schema (`schema.ts`). */
  readonly schemaFile: string;
  /** package.json name is `<name>-service`. */
  readonly name: string;
  readonly previous: PreviousOutput;
  readonly allowDestructive: boolean;
  /** `Model.field` -> the field name it was renamed from (`@renamedFrom`); kept out of the IR. */
  readonly renames: ReadonlyMap<string, string>;
  readonly locate: (model: string, field?: string) => SourceLocation;
  /** `--target citus` adds the distribution migration (citus.ts); default `postgres`. */
  readonly target?: Target;
}

export interface EmitOutput {
  /** Files to write, sorted by path. */
  readonly files: ReadonlyMap<string, string>;
  /** Files to delete: projections of removed models, untouched stubs of removed models. */
  readonly obsolete: readonly string[];
  /** The new migration's path and change summary, when there is one (the expand half of a pair). */
  readonly migration: MigrationSummary | null;
  /** The contract half, when the build emitted one. */
  readonly contract: MigrationSummary | null;
}

export interface MigrationSummary {
  readonly path: string;
  readonly summary: readonly string[];
}

export function emitProject(input: EmitInput): Result<EmitOutput> {
  const { schemaFile, previous } = input;
  const ir = placeColumns(input.ir, previous.snapshot);
  const target = input.target ?? 'postgres';
  const newTables = citusNewTables(target, previous.target ?? 'postgres');
  const migrations = emitMigrations({
    previous: previous.snapshot,
    previousLayout: previous.layout,
    next: ir,
    renames: input.renames,
    existing: previous.migrations,
    allowDestructive: input.allowDestructive,
    schemaFile,
    locate: input.locate,
    ...(newTables ? { newTables } : {}),
  });
  if (!migrations.ok) return migrations;
  const citus = emitCitusMigration({
    target, previousTarget: previous.target ?? 'postgres', next: ir, schemaFile,
    ...(previous.citusPlaced ? { placed: previous.citusPlaced } : {}),
    sequence: nextSequence([...previous.migrations, ...migrations.value.map((m) => m.path.slice('migrations/'.length))]),
  });
  const files = new Map<string, string>([
    ...migrations.value.map((m) => [m.path, m.content] as const),
    ...(citus ? [[citus.path, citus.content] as const] : []),
    ['schema.snapshot.json', snapshotFile(ir, target)],
    ['schema.ts', input.schemaSource],
    ['access.ts', emitAccess(ir, schemaFile)],
    ['models.ts', emitModels(ir, schemaFile)],
    ['client.ts', emitClient(ir, schemaFile)],
    ['actions.ts', emitActions(ir, schemaFile)],
    ['workflows.ts', emitWorkflows(ir, schemaFile)],
    ['resolvers/index.ts', emitResolverIndex(ir, schemaFile)],
    ['server.ts', emitServer(schemaFile)],
    ['tsconfig.json', emitTsconfig()],
    ['.gitignore', emitGitignore()],
    ['package.json', emitPackageJson(input.name)],
    ...emitProjections(ir, schemaFile),
    ...emitStubs(ir, previous.managed),
    ...emitCustomProjections(ir, previous.managed),
  ]);
  const obsolete = [...obsoleteProjections(files, previous.managed), ...obsoleteStubs(ir, previous.managed)].sort();
  const sorted = new Map([...files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const [first, second] = migrations.value.map(({ path, summary }) => ({ path, summary }));
  const migration = first ?? (citus ? { path: citus.path, summary: citus.summary } : null);
  return { ok: true, value: { files: sorted, obsolete, migration, contract: second ?? null } };
}

/**
 * `schema.snapshot.json`: the runtime's canonical snapshot of the IR, plus the
 * index layout its database has (`layout`, the generator's alone: ADR 020).
 */
export function snapshotFile(ir: SchemaIR, target: Target = 'postgres'): string {
  return stableStringify({ ...(toSnapshot(ir) as object), layout: CURRENT_LAYOUT, ...(target === 'citus' ? { target } : {}) });
}

/** After the highest `NNNN_` of `names`. */
function nextSequence(names: readonly string[]): number {
  return Math.max(0, ...names.map((name) => Number(/^(\d+)_/.exec(name)?.[1] ?? 0))) + 1;
}

/** Generated projection files whose model is gone. */
function obsoleteProjections(files: ReadonlyMap<string, string>, managed: ReadonlyMap<string, string>): string[] {
  return [...managed].filter(([path, content]) => path.startsWith('projections/') && !files.has(path) && content.includes(GENERATED_MARKER)).map(([path]) => path);
}
