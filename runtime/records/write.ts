/**
 * Mutations that write a model row: create, update, updateMany. Each writes
 * the row and appends its event in one transaction, running the operator's
 * hooks inside it. The row lock taken by the write serialises the events of
 * one record, so no event is lost and no version repeats.
 */
import { newId } from '../ids.ts';
import type { HookContext, ModelHooks } from '../service/types.ts';
import type { Caller } from './access.ts';
import type { RecordsDeps, Runner } from './deps.ts';
import { fromDatabaseError, invalid, notFound, RecordError } from './errors.ts';
import type { Row } from './include.ts';
import type { ModelInfo } from './model.ts';
import { Params, toDbValue } from './sql.ts';
import type { ValidData } from './validate.ts';
import { compileWhere } from './where.ts';
import { afterCommit, type Tx } from '../db/index.ts';
import type { CreatedCte } from '../events/index.ts';
import { changesSql, CHANGES_COLUMN, createdEntry, keepsChanges, priorColumns, recordEntry } from './audit.ts';

export const actorOf = (caller: Caller) => caller.principal?.userId ?? null;

export function hooksOf(deps: RecordsDeps, info: ModelInfo): ModelHooks<Row> {
  return deps.resolvers[info.name] ?? {};
}

export function hookContext(info: ModelInfo, caller: Caller, tx: Tx): HookContext {
  return { model: info.name, principal: caller.principal, tenantId: caller.scope.tenantId, tx };
}

/**
 * Runs `work` in a transaction; input-caused database errors become
 * VALIDATION_ERRORs. Once it commits, wakes the local change feed.
 */
export async function inTransaction<T>(deps: RecordsDeps, info: ModelInfo, work: (t: Tx) => Promise<T>): Promise<T> {
  try {
    return await deps.db.tx((t) => {
      afterCommit(t, () => deps.events.committed());
      return work(t);
    });
  } catch (error) {
    if (error instanceof RecordError) throw error;
    throw fromDatabaseError(error, info.fieldOfColumn) ?? error;
  }
}

type FieldInfo = NonNullable<ValidData['columns'][number]['field']>;

interface Reference {
  readonly field: FieldInfo;
  /** The referenced table: the target model's, or the media capability's `svc_media`. */
  readonly table: string;
  /** What the value must name, for the error: `a Company`, `a media item`. */
  readonly what: string;
  /** Extra condition on the referenced row (media: committed uploads only). */
  readonly live: string;
  /**
   * Media only: the row is locked `for share` until the write commits, so a
   * DELETE /media/{id} racing it waits, then sees this record and answers 409
   * (or, having committed first, makes this check fail): no record ends up
   * holding the id of a deleted item.
   */
  readonly lock: boolean;
  readonly value: unknown;
}

/** The belongsTo and Media fields set (non-null) in `valid`, with what they must refer to. */
function references(deps: RecordsDeps, valid: ValidData): Reference[] {
  return valid.columns.flatMap((c, i): Reference[] => {
    const type = c.field?.type;
    if (valid.values[i] === null) return [];
    if (type?.kind === 'media') {
      return [{ field: c.field!, table: 'svc_media', what: 'a media item', live: ` and t."status" = 'committed'`, lock: true, value: valid.values[i] }];
    }
    if (type?.kind !== 'belongsTo') return [];
    const target = deps.models.get(type.model)!;
    return [{ field: c.field!, table: target.table, what: `a ${target.name}`, live: '', lock: false, value: valid.values[i] }];
  });
}

/** SQL true when the reference is a live row of its table in the caller's tenant. */
function referenceSql(ref: Reference, p: Params): string {
  return `exists (select 1 from ${ref.table} t where t."id" = ${p.add(ref.value, 'text')} and t."deleted_at" is null${ref.live} and ${p.tenant()}${ref.lock ? ' for share of t' : ''})`;
}

/** A belongsTo or Media field must point at a live row of the same tenant: no cross-tenant links. */
async function checkReferences(deps: RecordsDeps, t: Runner, valid: ValidData, caller: Caller) {
  for (const ref of references(deps, valid)) {
    const p = new Params(caller.scope);
    const found = await deps.rows<{ ok: boolean }>(t, p.query(`select ${referenceSql(ref, p)} as ok`));
    if (!found[0].ok) throw invalid(ref.field.inputName, `${ref.field.inputName} does not refer to ${ref.what}`);
  }
}

async function insertRow(deps: RecordsDeps, t: Tx, info: ModelInfo, id: string, caller: Caller, valid: ValidData): Promise<Row> {
  const p = new Params(caller.scope);
  const columns = ['"id"', '"tenant_id"', ...valid.columns.map((c) => c.quoted)];
  const values = [p.add(id, 'text'), p.stamp(),
    ...valid.columns.map((c, i) => p.add(toDbValue(valid.values[i], c.sqlType), c.sqlType))];
  const text = `insert into ${info.table} as t (${columns.join(', ')}) values (${values.join(', ')}) returning ${info.selectList}`;
  const rows = await deps.rows<Row>(t, p.query(text));
  return rows[0];
}

export async function createRecord(deps: RecordsDeps, caller: Caller, model: unknown, data: unknown): Promise<Row> {
  const info = deps.model(model, 'create', caller);
  let valid = deps.validator.data(info, data, 'create');
  const hooks = hooksOf(deps, info);
  const id = newId();
  const eventId = newId();
  // Triggers that fold their effect into the statement keep the create one round trip.
  const triggered = hooks.beforeCreate || hooks.afterCreate
    ? null
    : deps.triggers.createdCtes(caller, { model: info.name, id, eventId, changed: Object.keys(valid.data) });
  if (triggered) {
    const row = await createInOneStatement(deps, info, id, eventId, caller, valid, triggered);
    if (row) return row;
  }
  return inTransaction(deps, info, async (t) => {
    const hookCtx = hookContext(info, caller, t);
    if (hooks.beforeCreate) {
      const changed = await hooks.beforeCreate({ ...valid.data }, hookCtx);
      if (changed) valid = deps.validator.data(info, changed, 'create');
    }
    await checkReferences(deps, t, valid, caller);
    const row = await insertRow(deps, t, info, id, caller, valid);
    const { eventId } = await deps.events.append(t, { streamType: info.name, streamId: id, eventType: 'Created', data: row, actorId: actorOf(caller), tenantId: caller.scope.tenantId });
    await deps.audit.record(t, createdEntry(info, caller, id, eventId, valid));
    await deps.triggers.written(t, caller, [{
      model: info.name, kind: 'created', step: 'Created', id, eventId, record: row, old: null, changed: Object.keys(valid.data),
    }]);
    if (hooks.afterCreate) await hooks.afterCreate(row, hookCtx);
    return row;
  });
}

/**
 * Create without hooks: row, reference checks, event, audit entry and the
 * triggers' CTEs (an action's job) in one autocommit statement, one round trip. Null when the history policy does not
 * keep the model's events (the transactional path then records the gap).
 */
async function createInOneStatement(
  deps: RecordsDeps, info: ModelInfo, id: string, eventId: string, caller: Caller, valid: ValidData, triggered: readonly CreatedCte[],
): Promise<Row | null> {
  const p = new Params(caller.scope);
  const columns = ['"id"', '"tenant_id"', ...valid.columns.map((c) => c.quoted)];
  const values = [p.add(id, 'text'), p.stamp(),
    ...valid.columns.map((c, i) => p.add(toDbValue(valid.values[i], c.sqlType), c.sqlType))];
  const refs = references(deps, valid).map((ref) => referenceSql(ref, p));
  const source = refs.length > 0 ? `select ${values.join(', ')} where ${refs.join(' and ')}` : `values (${values.join(', ')})`;
  const row = p.query(`insert into ${info.table} as t (${columns.join(', ')}) ${source} returning ${info.selectList}`);
  const audited = deps.audit.createdCte(createdEntry(info, caller, id, eventId, valid));
  const query = deps.events.withCreatedEvent(row, {
    streamType: info.name, streamId: id, eventType: 'Created', actorId: actorOf(caller), tenantId: caller.scope.tenantId, eventId,
  }, [...(audited ? [audited] : []), ...triggered]);
  if (!query) return null;
  let rows: Row[];
  try {
    rows = await deps.rows<Row>(deps.db, query);
    if (rows.length > 0) deps.events.committed();
  } catch (error) {
    throw fromDatabaseError(error, info.fieldOfColumn) ?? error;
  }
  if (rows.length === 0) {
    await checkReferences(deps, deps.db, valid, caller); // names the field that failed
    throw invalid('data', 'a referenced record does not exist');
  }
  return rows[0];
}

/**
 * Rows `ids` of the caller's tenant, live or not, in the API's shape; with
 * `lock`, taken FOR UPDATE (a watched write reads the row it replaces).
 */
export async function lockedRows(deps: RecordsDeps, t: Tx, info: ModelInfo, caller: Caller, ids: string[], lock: boolean): Promise<Row[]> {
  const p = new Params(caller.scope);
  const text = `select ${info.selectList} from ${info.table} t where t."id" = any(${p.add(ids, 'text[]')}) and ${p.tenant()}${lock ? ' for update' : ''}`;
  return deps.rows<Row>(t, p.query(text));
}

function setList(valid: ValidData, p: Params): string {
  const sets = valid.columns.map((c, i) => `${c.quoted} = ${p.add(toDbValue(valid.values[i], c.sqlType), c.sqlType)}`);
  return [...sets, '"updated_at" = now()'].join(', ');
}

/** Updates one live row in `t` (hooks included); NOT_FOUND when the tenant has no such live row. */
async function updateOne(deps: RecordsDeps, t: Tx, info: ModelInfo, caller: Caller, id: string, patch: ValidData) {
  const hooks = hooksOf(deps, info);
  const hookCtx = hookContext(info, caller, t);
  let valid = patch;
  if (hooks.beforeUpdate) {
    const changed = await hooks.beforeUpdate(id, { ...valid.data }, hookCtx);
    if (changed) valid = deps.validator.data(info, changed, 'update');
  }
  await checkReferences(deps, t, valid, caller);
  const p = new Params(caller.scope);
  const rows = await deps.rows<Row>(t, p.query(updateOneSql(deps, info, id, valid, p)));
  if (rows.length === 0) throw notFound(info.name, id);
  const { [CHANGES_COLUMN]: changes, ...row } = rows[0];
  if (hooks.afterUpdate) await hooks.afterUpdate(row, hookCtx);
  return { row, data: valid.data, changes: (changes ?? null) as Record<string, unknown> | null };
}

export async function updateRecord(deps: RecordsDeps, caller: Caller, model: unknown, id: string, data: unknown): Promise<Row> {
  const info = deps.model(model, 'update', caller);
  const patch = deps.validator.data(info, data, 'update');
  const watched = deps.triggers.watches(info.name, 'updated');
  return inTransaction(deps, info, async (t) => {
    const old = watched ? (await lockedRows(deps, t, info, caller, [id], true))[0] : null;
    const { row, data: changed, changes } = await updateOne(deps, t, info, caller, id, patch);
    const { eventId } = await deps.events.append(t, { streamType: info.name, streamId: id, eventType: 'Updated', data: changed, actorId: actorOf(caller), tenantId: caller.scope.tenantId });
    await deps.audit.record(t, recordEntry(info, caller, 'record.update', id, eventId, changes));
    if (watched) {
      await deps.triggers.written(t, caller, [{
        model: info.name, kind: 'updated', step: 'Updated', id, eventId, record: row, old: old ?? null, changed: Object.keys(changed as object),
      }]);
    }
    return row;
  });
}

/** Updates every live row matching `where`; one Updated event per row (appendMany). Returns the count. */
export async function updateMany(deps: RecordsDeps, caller: Caller, model: unknown, where: unknown, data: unknown): Promise<number> {
  const info = deps.model(model, 'update', caller);
  const patch = deps.validator.data(info, data, 'update');
  const hooks = hooksOf(deps, info);
  const perRow = Boolean(hooks.beforeUpdate || hooks.afterUpdate);
  const watched = deps.triggers.watches(info.name, 'updated');
  const p = new Params(caller.scope);
  const filter = `t."deleted_at" is null and ${p.tenant()} and ${compileWhere(info, where ?? {}, p, deps.limits.where)}`;
  return inTransaction(deps, info, async (t) => {
    let changes: Array<{ id: string; data: unknown; audit: Record<string, unknown> | null }>;
    // A watched model's old rows, locked before the write (the same rows the update then takes).
    const old = watched
      ? await deps.rows<Row>(t, p.query(`select ${info.selectList} from ${info.table} t where ${filter} order by t."id" for update`))
      : [];
    if (perRow) {
      // Hooks see (and may change) each row's patch, so rows are written one by one.
      const ids = await deps.rows<{ id: string }>(t, p.query(`select t."id" from ${info.table} t where ${filter} order by t."id" for update`));
      changes = [];
      for (const { id } of ids) {
        const updated = await updateOne(deps, t, info, caller, id, patch);
        changes.push({ id, data: updated.data, audit: updated.changes });
      }
    } else {
      await checkReferences(deps, t, patch, caller);
      const rows = await deps.rows<{ id: string; [CHANGES_COLUMN]?: Record<string, unknown> }>(t, p.query(updateManySql(deps, info, patch, filter, p)));
      changes = rows.map((row) => ({ id: row.id, data: patch.data, audit: row[CHANGES_COLUMN] ?? null }));
    }
    const events = changes.map((c) => ({
      streamType: info.name, streamId: c.id, eventType: 'Updated', data: c.data, actorId: actorOf(caller), tenantId: caller.scope.tenantId, eventId: newId(),
    }));
    await deps.events.appendMany(t, events);
    // One multi-row insert for every entry of the batch.
    await deps.audit.record(t, changes.map((c, i) => recordEntry(info, caller, 'record.update', c.id, events[i].eventId, c.audit)));
    if (watched && changes.length > 0) {
      const before = new Map(old.map((row) => [row.id as string, row]));
      const after = new Map((await lockedRows(deps, t, info, caller, changes.map((c) => c.id), false)).map((row) => [row.id as string, row]));
      await deps.triggers.written(t, caller, changes.map((c, i) => ({
        model: info.name, kind: 'updated' as const, step: 'Updated' as const, id: c.id, eventId: events[i].eventId,
        record: after.get(c.id) ?? null, old: before.get(c.id) ?? null, changed: Object.keys(c.data as object),
      })));
    }
    return changes.length;
  });
}

/** One live row's UPDATE; when entries keep changes, it reads the row's old values itself (`{field: [old, new]}`). */
function updateOneSql(deps: RecordsDeps, info: ModelInfo, id: string, valid: ValidData, p: Params): string {
  const set = setList(valid, p);
  if (!keepsChanges(deps)) {
    return `update ${info.table} as t set ${set}
      where t."id" = ${p.add(id, 'text')} and t."deleted_at" is null and ${p.tenant()} returning ${info.selectList}`;
  }
  return `update ${info.table} as t set ${set}
      from (select ${priorColumns(valid, 'o')} from ${info.table} o
             where o."id" = ${p.add(id, 'text')} and o."deleted_at" is null and ${p.tenant('o')} for update) prior
     where t."id" = prior."id" returning ${info.selectList}, ${changesSql(info, valid, 'prior', 't')} as "${CHANGES_COLUMN}"`;
}

/** The bulk UPDATE; when entries keep changes, it reads the old values of the locked rows itself. */
function updateManySql(deps: RecordsDeps, info: ModelInfo, patch: ValidData, filter: string, p: Params): string {
  if (!keepsChanges(deps)) return `update ${info.table} as t set ${setList(patch, p)} where ${filter} returning t."id"`;
  const set = setList(patch, p);
  return `update ${info.table} as u set ${set}
    from (select ${priorColumns(patch, 't')} from ${info.table} t where ${filter} for update) prior
   where u."id" = prior."id" returning u."id", ${changesSql(info, patch, 'prior', 'u')} as "${CHANGES_COLUMN}"`;
}
