/**
 * Read-model projections: one built-in current-state table per entity model,
 * plus custom projections an operator defines in resolver code.
 */
import type { Tx } from '../db/index.ts';

/** One model change as a projection sees it. */
export interface ProjectionEvent {
  readonly eventId: string;
  /** `Created`, `Updated`, `Deleted`, `Restored`, `HardDeleted`. */
  readonly eventType: string;
  readonly model: string;
  readonly recordId: string;
  /** Per-record version; 0 when the event log did not keep the event (history `off`). */
  readonly version: number;
  /** The change as written by the records layer; null when the log did not keep it. */
  readonly data: unknown;
  readonly actorId: string | null;
  readonly tenantId: string | null;
  readonly occurredAt: string;
  /** True while a rebuild replays the log, false for a live change. */
  readonly replay: boolean;
}

export interface ProjectionDefinition {
  readonly kind: 'projection';
  /** Unique among projections; shown by GET /projections. */
  readonly name: string;
  /** The model (schema name) whose changes the projection follows. */
  readonly sourceModel: string;
  /**
   * True when `reset` and `apply` touch the database only through `tx`, so a
   * rebuild can run in the one shared transaction and roll back as a whole.
   * False: POST /projections/rebuild answers 409 PROJECTION_REBUILD_UNSUPPORTED.
   */
  readonly transactionalRebuild: boolean;
  /** Applies one change; live changes run once per change across all instances. */
  apply(event: ProjectionEvent, tx: Tx): void | Promise<void>;
  /** Clears the projection's own state before a rebuild replays the log. */
  reset?(tx: Tx): void | Promise<void>;
}

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

export interface ProjectionService {
  list(): readonly ProjectionInfo[];
  /** Built-in projection of a model, by model name. */
  tableOf(model: string): TableProjection | undefined;
  stats(): RefreshStats;
}

/** A built-in projection's table and columns (all text). */
export interface TableProjection {
  readonly model: string;
  readonly name: string;
  readonly table: string;
  readonly baseTable: string;
  readonly columns: readonly ProjectedColumn[];
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
