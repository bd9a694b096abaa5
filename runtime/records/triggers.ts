/**
 * The write-trigger seam: what a committed-with-the-write side effect (an
 * action's job, a workflow run) sees of a record write, inside the write's
 * transaction. Capabilities register a trigger with
 * `ctx.services.records.triggers.add(...)`; records never knows what they do.
 *
 * A model write a trigger watches takes the transactional path and reads the
 * old row it replaces, so `old` is whole. A create without hooks may stay one
 * statement when every trigger watching it folds its effect into that
 * statement as CTEs (`createdCtes`); a trigger without it, or returning null,
 * sends the create down the transactional path to `written`.
 */
import type { Tx } from '../db/index.ts';
import type { CreatedCte } from '../events/index.ts';
import type { Caller } from './access.ts';
import type { Row } from './row.ts';

/** How a binding names a write: `restore` counts as `updated`, `hardDelete` as `deleted`. */
export type WriteKind = 'created' | 'updated' | 'deleted';

/** The event type the write appended. */
export type WriteStep = 'Created' | 'Updated' | 'Deleted' | 'Restored' | 'HardDeleted';

export const KIND_OF_STEP: Record<WriteStep, WriteKind> = {
  Created: 'created', Updated: 'updated', Restored: 'updated', Deleted: 'deleted', HardDeleted: 'deleted',
};

export interface WrittenRecord {
  readonly model: string;
  readonly kind: WriteKind;
  readonly step: WriteStep;
  readonly id: string;
  /** The event the write appended (an action's idempotency key is `{eventId}:{action}`). */
  readonly eventId: string;
  /** The row after the write, as the API returns it; null after a hard delete. */
  readonly record: Row | null;
  /** The row before the write; null for a create. */
  readonly old: Row | null;
  /** Input names of the fields the write set (an update's patch; every written field of a create). */
  readonly changed: readonly string[];
}

/** A create before it runs: what a trigger may fold into its one statement. */
export interface PlannedCreate {
  readonly model: string;
  readonly id: string;
  /** The Created event the statement appends. */
  readonly eventId: string;
  /** Input names of the fields the create sets. */
  readonly changed: readonly string[];
}

export interface WriteTrigger {
  /** True when writes of `model` of this kind may concern the trigger. */
  watches(model: string, kind: WriteKind): boolean;
  /** Runs in the write's transaction, after its events and audit entries; one call per statement's rows. */
  written(t: Tx, caller: Caller, writes: readonly WrittenRecord[]): Promise<void>;
  /**
   * Optional: the trigger's effect on a create as CTEs of the create's own
   * statement, reading the created row (API-shaped columns) from the CTE they
   * are given. Null: this create needs `written` in a transaction.
   */
  createdCtes?(caller: Caller, create: PlannedCreate): readonly CreatedCte[] | null;
}

export class WriteTriggers {
  private readonly triggers: WriteTrigger[] = [];

  add(trigger: WriteTrigger): void {
    this.triggers.push(trigger);
  }

  watches(model: string, kind: WriteKind): boolean {
    return this.triggers.some((trigger) => trigger.watches(model, kind));
  }

  /** Every watching trigger's CTEs for a create ([] when none watches), or null when one needs the transactional path. */
  createdCtes(caller: Caller, create: PlannedCreate): CreatedCte[] | null {
    const ctes: CreatedCte[] = [];
    for (const trigger of this.triggers) {
      if (!trigger.watches(create.model, 'created')) continue;
      const more = trigger.createdCtes?.(caller, create) ?? null;
      if (more === null) return null;
      ctes.push(...more);
    }
    return ctes;
  }

  async written(t: Tx, caller: Caller, writes: readonly WrittenRecord[]): Promise<void> {
    if (writes.length === 0) return;
    for (const trigger of this.triggers) {
      const kind = writes[0].kind;
      if (trigger.watches(writes[0].model, kind)) await trigger.written(t, caller, writes);
    }
  }
}
