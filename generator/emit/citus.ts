/**
 * `svc-gen build --target citus` (docs/adr/025-distributable-layout.md,
 * docs/scaling.md): one more migration, after the schema's own, that hands
 * the tables to Citus. Everything else of the build is the default build's.
 *
 * - reference tables first (`create_reference_table`), in the order of their
 *   foreign keys;
 * - then every distributed table by `tenant_id` (`create_distributed_table`),
 *   each after every table its foreign keys reference, all co-located with one
 *   anchor, `svc_events`: the runtime's tenant tables, the model tables in
 *   belongsTo order, their `<model>_projection` tables (which the runtime
 *   creates at its start, after every migration: this migration creates them
 *   first, `if not exists`, in the layout the runtime gives them).
 *
 * The runner applies the runtime's migrations before the schema's
 * (runtime/service/start.ts `migrationSets`), so every runtime table exists
 * when this file runs. Each distribution is an `online` step: one statement in
 * autocommit without a statement timeout (Citus copies the rows of a table
 * that has some, blocking its writes meanwhile), guarded by Citus's catalog
 * (`pg_dist_partition`) so a step that committed before its runner died is
 * not run twice.
 *
 * A project built with the target once keeps it (the snapshot says
 * `"target": "citus"`): a later build hands each new model's tables to Citus
 * inside the migration that creates them (`citusNewTables`), right after the
 * model's `create table` and before any foreign key to or from it. Citus
 * refuses a key from a distributed table to a table that is not (yet)
 * distributed or a reference table (an existing model gaining a belongsTo to
 * the new one), so a migration of its own after that one could never run.
 * The runtime's tables that a newer svc-gen places and the project's earlier
 * distribution files did not (`placedRuntimeTables` reads them) are handed
 * over by a migration of their own after the schema's
 * (`NNNN_distribute_new_runtime_tables_for_citus.sql`): no model table refers
 * to them, so its place among the files does not matter.
 */
import type { Model, SchemaIR } from '../../runtime/ir/types.ts';
import { migrationFileName, projectionTableName, quoteIdent } from '../ir/naming.ts';
import { projectionColumns } from './projections.ts';
import type { NewTableSteps } from './migrate/index.ts';
import { online, preflight, stepLine, transactional, type Step } from './migrate/steps.ts';
import { render } from './templates.ts';

export type Target = 'postgres' | 'citus';
export const TARGETS: readonly Target[] = ['postgres', 'citus'];

/**
 * The runtime's tables by placement, as runtime/db/distributed/tables.ts lists
 * them (the generator does not import the runtime's db layer;
 * test/generator/citus.test.ts checks that the two lists agree). Each list is
 * in an order Citus accepts: a table after the tables its foreign keys reference.
 */
export const RUNTIME_REFERENCE_TABLES = [
  'svc_users', 'svc_sessions', 'svc_refresh_tokens', 'svc_oauth_identities', 'svc_worker_tokens', 'svc_history_coverage',
] as const;
/** The first is the co-location anchor. */
export const RUNTIME_DISTRIBUTED_TABLES = ['svc_events', 'svc_changes', 'svc_audit', 'svc_media_blobs', 'svc_media', 'svc_tenant_heads', 'svc_audit_daily', 'svc_audit_daily_actors'] as const;
export const ANCHOR = RUNTIME_DISTRIBUTED_TABLES[0];
export const DISTRIBUTION_COLUMN = 'tenant_id';

export interface CitusInput {
  readonly target: Target;
  readonly previousTarget: Target;
  readonly next: SchemaIR;
  /** The number the file gets: after every migration of this build. */
  readonly sequence: number;
  readonly schemaFile: string;
  /** The runtime tables the project's earlier distribution files placed (`placedRuntimeTables`); read when `previousTarget` is citus. */
  readonly placed?: ReadonlySet<string>;
}

export interface CitusMigration {
  readonly path: string;
  readonly content: string;
  readonly summary: readonly string[];
}

/**
 * The distribution migration this build adds: the first build with the target
 * distributes every table; a later one, the runtime tables its earlier
 * distribution files did not place (null when there are none: its new model
 * tables are distributed by `citusNewTables`); null for the default target.
 */
export function emitCitusMigration(input: CitusInput): CitusMigration | null {
  if (input.target !== 'citus') return null;
  if (input.previousTarget === 'citus') return emitNewRuntimeTables(input);
  const models = inForeignKeyOrder(input.next.models);
  const distributed = [...RUNTIME_DISTRIBUTED_TABLES, ...models.map((m) => m.table), ...models.map((m) => projectionTableName(m.table))];
  const steps: Step[] = [hasCitus()];
  if (models.length > 0) {
    steps.push(transactional('the projection tables, which the runtime would create at its start, after this migration',
      ...models.map(projectionTable)));
  }
  // Audit migration 0005 keeps this default for instances of builds before it; the runtime writes every id.
  steps.push(transactional('svc_audit.id without its default: the runtime writes every id (a default drawing on a sequence is the coordinator\'s)',
    'alter table "svc_audit" alter column "id" drop default;'));
  for (const table of RUNTIME_REFERENCE_TABLES) {
    steps.push(online(`reference table ${table}, a copy on every node (its writes wait while Citus copies its rows)`, guarded(table, `create_reference_table(${regclass(table)})`)));
  }
  for (const table of distributed) {
    const what = table === ANCHOR ? 'the co-location anchor' : `co-located with ${ANCHOR}`;
    steps.push(distribute(table, `distribute ${table} by ${DISTRIBUTION_COLUMN}, ${what} (its writes wait while Citus copies its rows)`));
  }
  const summary = [
    `reference tables: ${RUNTIME_REFERENCE_TABLES.join(', ')}`,
    `distributed by ${DISTRIBUTION_COLUMN}, co-located with ${ANCHOR}: ${RUNTIME_DISTRIBUTED_TABLES.join(', ')}`,
    ...(models.length > 0 ? [`distributed by ${DISTRIBUTION_COLUMN}, co-located with ${ANCHOR}: ${models.map((m) => m.table).join(', ')} and ${models.length === 1 ? 'its projection' : 'their projections'}`] : []),
  ];
  return citusFile(input, 'distribute for citus', 'distribute the tables for Citus (--target citus)', summary, steps);
}

/**
 * A distributed project's runtime tables that its distribution files did not
 * place: a newer svc-gen's runtime has them (the feed heads and the audit
 * rollups came after the first `--target citus`). The runtime's migrations run
 * before the schema's, so they exist; they may hold rows (a running
 * deployment fills them), which Citus copies to the shards while their writes
 * wait. Reference tables first, each list in its order, as in the first file.
 */
function emitNewRuntimeTables(input: CitusInput): CitusMigration | null {
  const placed = input.placed ?? new Set<string>();
  const reference = RUNTIME_REFERENCE_TABLES.filter((table) => !placed.has(table));
  const distributed = RUNTIME_DISTRIBUTED_TABLES.filter((table) => !placed.has(table));
  if (reference.length === 0 && distributed.length === 0) return null;
  const newer = 'a runtime table the earlier distribution did not place';
  const steps: Step[] = [
    hasCitus(),
    ...reference.map((table) => online(`reference table ${table}, a copy on every node (${newer}; its writes wait while Citus copies its rows)`,
      guarded(table, `create_reference_table(${regclass(table)})`))),
    ...distributed.map((table) => distribute(table,
      `distribute ${table} by ${DISTRIBUTION_COLUMN}, ${table === ANCHOR ? 'the co-location anchor' : `co-located with ${ANCHOR}`} (${newer}; its writes wait while Citus copies its rows)`)),
  ];
  const summary = [
    ...(reference.length > 0 ? [`reference tables: ${reference.join(', ')}`] : []),
    ...(distributed.length > 0 ? [`distributed by ${DISTRIBUTION_COLUMN}, co-located with ${ANCHOR}: ${distributed.join(', ')}`] : []),
  ];
  return citusFile(input, 'distribute new runtime tables for citus',
    'distribute the runtime tables the earlier distribution did not place, for Citus (--target citus)', summary, steps);
}

function citusFile(input: CitusInput, name: string, title: string, summary: readonly string[], steps: readonly Step[]): CitusMigration {
  const number = String(input.sequence).padStart(4, '0');
  const content = render('migration.sql', {
    schemaFile: input.schemaFile,
    contractOf: null,
    title: `svc-gen migration ${number}: ${title}`,
    details: summary,
    contractIn: null,
    destructive: [],
    steps: steps.map((step, i) => ({ line: stepLine(step, i + 1), sql: step.sql })),
  });
  return { path: `migrations/${migrationFileName(input.sequence, name)}`, content, summary: [title, ...summary] };
}

/**
 * The runtime's tables that the distribution files of a project (the texts of
 * its `*_for_citus.sql` migrations) hand to Citus, distributed or reference.
 */
export function placedRuntimeTables(files: Iterable<string>): Set<string> {
  const placed = new Set<string>();
  for (const text of files) {
    for (const match of text.matchAll(/create_(?:distributed|reference)_table\('"(svc_[a-z0-9_]+)"'/g)) placed.add(match[1]);
  }
  return placed;
}

/**
 * On a project already distributed (`--target citus`, and the previous
 * snapshot says so), the steps the schema migration runs around each new
 * model's table (generator/emit/migrate/index.ts): a preflight first (the
 * database has Citus), then, right after the model's `create table` and
 * before every foreign key of that file (they come last: PHASE in
 * migrate/changes.ts), the table distributed by `tenant_id` co-located with
 * the anchor, its projection table created and distributed the same way.
 * The new table is empty, so each distribution is a catalog change. Its
 * keys to existing tables, and existing tables' keys to it (a new belongsTo
 * on an existing model), are then keys between co-located distributed
 * tables, which Citus accepts; a key from a distributed table to a local one
 * it refuses.
 */
export function citusNewTables(target: Target, previousTarget: Target): NewTableSteps | undefined {
  if (target !== 'citus' || previousTarget !== 'citus') return undefined;
  return {
    first: [hasCitus()],
    after: (model) => {
      const projection = projectionTableName(model.table);
      const why = `co-located with ${ANCHOR}, before any foreign key to or from it (--target citus; a new, empty table)`;
      return [
        distribute(model.table, `Citus: distribute ${model.table} by ${DISTRIBUTION_COLUMN}, ${why}`),
        transactional(`Citus: the projection table of ${model.name}, which the runtime would create at its start, after this migration`, projectionTable(model)),
        distribute(projection, `Citus: distribute ${projection} by ${DISTRIBUTION_COLUMN}, co-located with ${ANCHOR} (--target citus; a new, empty table)`),
      ];
    },
    details: (models) => [
      `Citus (--target citus): distribute ${models.map((m) => m.table).join(', ')} and ${models.length === 1 ? 'its projection' : 'their projections'} by ${DISTRIBUTION_COLUMN}, co-located with ${ANCHOR}, each right after its create table`,
    ],
  };
}

const hasCitus = () => preflight('the database has Citus (run `create extension citus` on the coordinator first)',
  `select 'create extension citus' as missing where not exists (select from pg_proc where proname = 'create_distributed_table');`);

function distribute(table: string, description: string): Step {
  const colocate = table === ANCHOR ? 'none' : ANCHOR;
  return online(description, guarded(table, `create_distributed_table(${regclass(table)}, '${DISTRIBUTION_COLUMN}', colocate_with => '${colocate}')`));
}

/** Models so that each comes after the models its belongsTo fields reference (a cycle keeps the declared order). */
export function inForeignKeyOrder(models: readonly Model[]): Model[] {
  const byName = new Map(models.map((m) => [m.name, m]));
  const seen = new Set<string>();
  const out: Model[] = [];
  const visit = (model: Model) => {
    if (seen.has(model.name)) return;
    seen.add(model.name);
    for (const field of model.fields) {
      const target = field.type.kind === 'belongsTo' ? byName.get(field.type.model) : undefined;
      if (target && target !== model) visit(target);
    }
    out.push(model);
  };
  for (const model of models) visit(model);
  return out;
}

/** `<model>_projection` in the distributable layout: every column text, `tenant_id` not null, keyed `(tenant_id, id)`. */
function projectionTable(model: Model): string {
  const columns = projectionColumns(model).map((c) => `  ${quoteIdent(c)} text${c === 'id' || c === DISTRIBUTION_COLUMN ? ' not null' : ''},`);
  return `create table if not exists ${quoteIdent(projectionTableName(model.table))} (\n${columns.join('\n')}\n  primary key ("tenant_id", "id")\n);`;
}

const regclass = (table: string) => `'${quoteIdent(table).replace(/'/g, "''")}'`;

/**
 * The call, unless Citus's catalog already holds the table (a step that
 * committed before its runner died): one statement that returns no row.
 */
function guarded(table: string, call: string): string {
  return `do $$ begin if not exists (select from pg_dist_partition where logicalrelid = ${regclass(table)}::regclass) then perform ${call}; end if; end $$;`;
}
