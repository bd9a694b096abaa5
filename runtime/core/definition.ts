/**
 * What a generated project's server.ts hands to the runtime: the snapshot,
 * access table, resolver hooks and custom projections. Plain types that the
 * service, records and projections all read, so they live below all of them.
 */
import type { Tx } from '../db/index.ts';
import type { AccessTable } from '../ir/types.ts';
import type { Principal } from './principal.ts';

export interface HookContext {
  readonly model: string;
  readonly principal: Principal | null;
  /** The scope's tenant as the API shows it: null for the global scope. */
  readonly tenantId: string | null;
  /**
   * The `tenant_id` a model table stores for this scope: the tenant, or `''`
   * for the global scope (layout 3, ADR 025: the column is NOT NULL). Write
   * this, not `tenantId`, when a hook inserts into a model table.
   */
  readonly tenantKey: string;
  /** The mutation's transaction: run any query of the hook on it. */
  readonly tx: Tx;
}

/** Typed hooks an operator may fill in `resolvers/<Model>.ts`. Run inside the mutation's transaction. */
export interface ModelHooks<T = Record<string, unknown>> {
  beforeCreate?(data: Partial<T>, ctx: HookContext): Partial<T> | void | Promise<Partial<T> | void>;
  afterCreate?(record: T, ctx: HookContext): void | Promise<void>;
  beforeUpdate?(id: string, patch: Partial<T>, ctx: HookContext): Partial<T> | void | Promise<Partial<T> | void>;
  afterUpdate?(record: T, ctx: HookContext): void | Promise<void>;
  beforeDelete?(id: string, ctx: HookContext): void | Promise<void>;
  afterDelete?(id: string, ctx: HookContext): void | Promise<void>;
}

export type ResolverTable = Readonly<Record<string, ModelHooks<any>>>;

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

/** What a generated project's server.ts hands to the runtime. */
export interface ServiceDefinition {
  readonly kind: 'service';
  readonly snapshot: unknown;
  readonly access: AccessTable;
  readonly resolvers: ResolverTable;
  /** The generated project's folder (migrations/, projections/, schema.ts). */
  readonly root: URL;
  /** Custom read-model projections (`defineProjection`), beside the built-in one per model. */
  readonly projections?: readonly ProjectionDefinition[];
}
