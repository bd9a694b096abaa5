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
 * `"target": "citus"`): a later build distributes the tables of new models in
 * a migration of their own.
 */
import type { Model, SchemaIR } from '../../runtime/ir/types.ts';
import { migrationFileName, projectionTableName, quoteIdent } from '../ir/naming.ts';
import { projectionColumns } from './projections.ts';
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
  /** The previous snapshot's IR (null for a first build). */
  readonly previous: SchemaIR | null;
  readonly next: SchemaIR;
  /** The number the file gets: after every migration of this build. */
  readonly sequence: number;
  readonly schemaFile: string;
}

export interface CitusMigration {
  readonly path: string;
  readonly content: string;
  readonly summary: readonly string[];
}

/** The distribution migration this build adds, or null (default target, or nothing new to distribute). */
export function emitCitusMigration(input: CitusInput): CitusMigration | null {
  if (input.target !== 'citus') return null;
  const whole = input.previousTarget !== 'citus';
  const known = new Set(whole ? [] : (input.previous?.models ?? []).map((m) => m.table));
  const models = inForeignKeyOrder(input.next.models).filter((m) => !known.has(m.table));
  if (!whole && models.length === 0) return null;
  const reference = whole ? [...RUNTIME_REFERENCE_TABLES] : [];
  const distributed = [
    ...(whole ? RUNTIME_DISTRIBUTED_TABLES : []),
    ...models.map((m) => m.table),
    ...models.map((m) => projectionTableName(m.table)),
  ];
  const steps: Step[] = [
    preflight('the database has Citus (run `create extension citus` on the coordinator first)',
      `select 'create extension citus' as missing where not exists (select from pg_proc where proname = 'create_distributed_table');`),
  ];
  if (models.length > 0) {
    steps.push(transactional('the projection tables, which the runtime would create at its start, after this migration',
      ...models.map(projectionTable)));
  }
  for (const table of reference) {
    steps.push(online(`reference table ${table}, a copy on every node (its writes wait while Citus copies its rows)`, guarded(table, `create_reference_table(${regclass(table)})`)));
  }
  for (const table of distributed) {
    const colocate = table === ANCHOR ? 'none' : ANCHOR;
    const what = table === ANCHOR ? 'the co-location anchor' : `co-located with ${ANCHOR}`;
    steps.push(online(`distribute ${table} by ${DISTRIBUTION_COLUMN}, ${what} (its writes wait while Citus copies its rows)`,
      guarded(table, `create_distributed_table(${regclass(table)}, '${DISTRIBUTION_COLUMN}', colocate_with => '${colocate}')`)));
  }
  const runtime = whole ? RUNTIME_DISTRIBUTED_TABLES.join(', ') : null;
  const summary = [
    ...(reference.length > 0 ? [`reference tables: ${reference.join(', ')}`] : []),
    ...(runtime ? [`distributed by ${DISTRIBUTION_COLUMN}, co-located with ${ANCHOR}: ${runtime}`] : []),
    ...(models.length > 0 ? [`distributed by ${DISTRIBUTION_COLUMN}, co-located with ${ANCHOR}: ${models.map((m) => m.table).join(', ')} and ${models.length === 1 ? 'its projection' : 'their projections'}`] : []),
  ];
  const title = whole ? 'distribute the tables for Citus (--target citus)' : `distribute ${models.map((m) => m.name).join(', ')} for Citus (--target citus)`;
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
  const name = whole ? 'distribute for citus' : `distribute ${models.map((m) => m.table).join(' ')} for citus`;
  return { path: `migrations/${migrationFileName(input.sequence, name)}`, content, summary: [title, ...summary] };
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
