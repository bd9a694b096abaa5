/**
 * The soft-delete lifecycle: delete (sets deleted_at), restore, hardDelete.
 * All three need the model's `delete` permission; each is one event.
 */
import type { Caller } from './access.ts';
import type { RecordsDeps } from './deps.ts';
import { notFound } from './errors.ts';
import type { Row } from './row.ts';
import type { ModelInfo } from './model.ts';
import { scopedQuery } from './sql.ts';
import { sql, type Sql } from '../sql/index.ts';
import { actorOf, hookContext, hooksOf, inTransaction, lockedRows } from './write.ts';
import { KIND_OF_STEP } from './triggers.ts';
import type { Tx } from '../db/index.ts';
import type { AuditAction } from '../audit/index.ts';
import { recordEntry } from './audit.ts';

type Step = 'Deleted' | 'Restored' | 'HardDeleted';

const ACTIONS: Record<Step, AuditAction> = { Deleted: 'record.delete', Restored: 'record.restore', HardDeleted: 'record.hardDelete' };

const STATEMENTS: Record<Step, (info: ModelInfo, where: Sql) => Sql> = {
  Deleted: (info, where) =>
    sql`update ${info.table} as t set "deleted_at" = now(), "updated_at" = now() where ${where} and t."deleted_at" is null returning ${info.selectList}`,
  Restored: (info, where) =>
    sql`update ${info.table} as t set "deleted_at" = null, "updated_at" = now() where ${where} and t."deleted_at" is not null returning ${info.selectList}`,
  HardDeleted: (info, where) => sql`delete from ${info.table} as t where ${where} returning t."id"`,
};

async function step(deps: RecordsDeps, caller: Caller, model: unknown, id: string, kind: Step): Promise<Row> {
  const info = deps.model(model, 'delete', caller);
  const hooks = hooksOf(deps, info);
  const deleting = kind !== 'Restored';
  const watched = deps.triggers.watches(info.name, KIND_OF_STEP[kind]);
  return inTransaction(deps, info, async (t: Tx) => {
    const hookCtx = hookContext(info, caller, t);
    if (deleting && hooks.beforeDelete) await hooks.beforeDelete(id, hookCtx);
    const old = watched ? (await lockedRows(deps, t, info, caller, [id], true))[0] ?? null : null;
    const where = sql`t."id" = ${sql.value(id, 'text')} and ${caller.scope.predicate()}`;
    if (kind === 'HardDeleted') await clearReferences(deps, t, info, caller, id);
    const rows = await deps.rows<Row>(t, scopedQuery(caller.scope, STATEMENTS[kind](info, where)));
    if (rows.length === 0) throw notFound(info.name, id);
    const data = kind === 'Deleted' ? { id, deletedAt: rows[0].deletedAt } : { id };
    const { eventId } = await deps.events.append(t, { streamType: info.name, streamId: id, eventType: kind, data, actorId: actorOf(caller), tenantId: caller.scope.tenantId });
    await deps.audit.record(t, recordEntry(info, caller, ACTIONS[kind], id, eventId));
    if (watched) {
      await deps.triggers.written(t, caller, [{
        model: info.name, kind: KIND_OF_STEP[kind], step: kind, id, eventId,
        record: kind === 'HardDeleted' ? null : rows[0], old, changed: [],
      }]);
    }
    if (deleting && hooks.afterDelete) await hooks.afterDelete(id, hookCtx);
    return rows[0];
  });
}

/**
 * Before a hard delete: every optional belongsTo pointing at the rows is set
 * to null, one statement per referencing column, each in the caller's tenant
 * (a row refers to rows of its own tenant only: the composite key), served by
 * the relation index `(tenant_id, x_id)`. The keys are `on delete no action`
 * (Citus refuses `set null` on a key holding the distribution column, ADR
 * 025), so the runtime does what Postgres' `set null (x_id)` did, as
 * silently: no event, `updated_at` unchanged (docs/scaling.md). A required
 * reference still refuses the delete (`on delete restrict`).
 */
async function clearReferences(deps: RecordsDeps, t: Tx, info: ModelInfo, caller: Caller, id: string): Promise<void> {
  if (info.referencedBy.length === 0) return;
  // The row first, FOR UPDATE: a writer that is adding a reference to it holds FOR SHARE (write.ts) or the
  // key's FOR KEY SHARE until it commits; waiting for it here lets the update below clear its reference
  // too, as `set null` did, where the delete's check would otherwise refuse it.
  const ids = [id];
  const locked = await deps.rows(t, scopedQuery(caller.scope, sql`select 1 from ${info.table} as t
    where t."id" = any(${sql.value(ids, 'text[]')}) and ${caller.scope.predicate()} for update`));
  if (locked.length === 0) return; // NOT_FOUND: the delete says so
  for (const ref of info.referencedBy) {
    const statement = sql`update ${ref.table} as t set ${ref.column} = null
      where ${caller.scope.predicate()} and t.${ref.column} = any(${sql.value(ids, 'text[]')})`;
    await deps.rows(t, scopedQuery(caller.scope, statement));
  }
}

/** Soft delete; NOT_FOUND when the tenant has no live record `id`. */
export async function deleteRecord(deps: RecordsDeps, caller: Caller, model: unknown, id: string): Promise<boolean> {
  await step(deps, caller, model, id, 'Deleted');
  return true;
}

/** Brings a soft-deleted record back; NOT_FOUND unless it is in the tenant's trash. */
export function restoreRecord(deps: RecordsDeps, caller: Caller, model: unknown, id: string): Promise<Row> {
  return step(deps, caller, model, id, 'Restored');
}

/** Removes the row for good (live or in the trash); its history stays in the event log. */
export async function hardDeleteRecord(deps: RecordsDeps, caller: Caller, model: unknown, id: string): Promise<boolean> {
  await step(deps, caller, model, id, 'HardDeleted');
  return true;
}
