/**
 * Read-model projections: one built-in current-state table per entity model,
 * plus custom projections an operator defines in resolver code.
 */
import type { Tx } from '../db/index.ts';
import type { ProjectionDefinition } from '../core/definition.ts';

export type { ProjectionDefinition, ProjectionEvent } from '../core/definition.ts';

export type ProjectionInput = Omit<ProjectionDefinition, 'kind' | 'transactionalRebuild'> & {
  readonly transactionalRebuild?: boolean;
};

/** `export const dealTotals = defineProjection({ name, sourceModel, apply, reset, transactionalRebuild })`. */
export function defineProjection(input: ProjectionInput): ProjectionDefinition {
  return { ...input, kind: 'projection', transactionalRebuild: input.transactionalRebuild ?? false };
}

export interface ProjectionInfo {
  readonly name: string;
  readonly sourceModel: string;
  readonly kind: 'table' | 'custom';
  /** The table of a built-in projection; null for a custom one. */
  readonly table: string | null;
}

export interface RefreshStats {
  /** Live refreshes applied by this instance since start. */
  readonly refreshed: number;
  readonly failures: number;
  /** Changes heard but not yet applied on this instance. */
  readonly pending: number;
  readonly lastRefreshAt: string | null;
}

/** Where a built-in projection stands: ready, or built in the background (ADR 021). */
export interface ProjectionState {
  readonly status: 'ready' | 'building';
  /** Null when ready. `done`: base rows walked; `estimatedTotal`: the base table's planner estimate at the start of the build. */
  readonly build: {
    readonly phase: 'rows' | 'orphans';
    readonly done: number;
    readonly estimatedTotal: number | null;
    readonly startedAt: string | null;
  } | null;
}

export interface ProjectionService {
  list(): readonly ProjectionInfo[];
  /** Built-in projection of a model, by model name. */
  tableOf(model: string): TableProjection | undefined;
  stats(): RefreshStats;
  /** The state of every built-in projection, by projection name (one indexed read; ready ones from memory). */
  states(): Promise<ReadonlyMap<string, ProjectionState>>;
  /** Resolves when the model's built-in projection is ready; else throws 503 UNAVAILABLE saying it is being built. */
  assertReady(model: string): Promise<void>;
  /**
   * Asks for an index of a projection table, built in the background once the
   * instance listens (indexes.ts); only asks made during start count. Reads
   * must not depend on it.
   */
  wantIndex(index: ProjectionIndex): void;
}

/** An index of a projection table: a plain b-tree on `columns`, in order. */
export interface ProjectionIndex {
  readonly name: string;
  readonly table: string;
  readonly columns: readonly string[];
}

/** A built-in projection's table and columns (all text). */
export interface TableProjection {
  readonly model: string;
  readonly name: string;
  readonly table: string;
  readonly baseTable: string;
  readonly columns: readonly ProjectedColumn[];
  /**
   * The projection's key is `(tenant_id, id)` (layout 3, ADR 025: a table made
   * by this version or converted), else `id` alone (a table of layout 2); the
   * upsert's conflict target follows it. Read from the catalog at start.
   */
  readonly keyedByTenant?: boolean;
}

export interface ProjectedColumn {
  /** Column of the base table and of the projection (same name). */
  readonly column: string;
  /** JSON name: `id`, `tenantId`, the field's input name (`vendorId`), ... */
  readonly jsonName: string;
  /** IR field name for declared fields; the JSON name for system columns. */
  readonly fieldName: string;
  /** The base column's SQL type, e.g. `double precision`; filled at start. */
  readonly baseType: string;
}
