/**
 * Mutations that write a model row: create, update, updateMany. Each writes
 * the row and appends its event in one transaction, running the operator's
 * hooks inside it. The row lock taken by the write serialises the events of
 * one record, so no event is lost and no version repeats.
 */
import { newId } from '../ids.ts';
import type { HookContext, ModelHooks } from '../core/index.ts';
import type { Caller } from './access.ts';
import type { RecordsDeps, Runner } from './deps.ts';
import { fromDatabaseError, invalid, notFound, RecordError } from './errors.ts';
import type { Row } from './row.ts';
import type { ModelInfo } from './model.ts';
import { columnValue, scopedQuery } from './sql.ts';
import type { ValidData } from './validate.ts';
import { compileWhere } from './where.ts';
import { afterCommit, type Tx } from '../db/index.ts';
import { cteFragments, CREATED, type CreatedCte } from '../events/index.ts';
import { sql, type Sql } from '../sql/index.ts';
import { changesSql, CHANGES_COLUMN, createdEntry, keepsChanges, priorColumns, recordEntry } from './audit.ts';

export const actorOf = (caller: Caller) => caller.principal?.userId ?? null;

export function hooksOf(deps: RecordsDeps, info: ModelInfo): ModelHooks<Row> {
  return deps.resolvers[info.name] ?? {};
}

export function hookContext(info: ModelInfo, caller: Caller, tx: Tx): HookContext {
  return { model: info.name, principal: caller.principal, tenantId: caller.scope.tenantId, tenantKey: caller.scope.key, tx };
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
  readonly table: Sql;
  /** What the value must name, for the error: `a Company`, `a media item`. */
  readonly what: string;
  /** Extra condition on the referenced row (media: committed uploads only). */
  readonly live: Sql;
  /**
   * Media only: the row is locked `for share` until the write commits, so a
   * DELETE /media/{id} racing it waits, then sees this record and answers 409
   * (or, having committed first, makes this check fail): no record ends up
   * holding the id of a deleted item.
   */
  readonly lock: boolean;
  readonly value: unknown;
}

const MEDIA_TABLE = sql.ident('svc_media');
const COMMITTED = sql` and t."status" = 'committed'`;
const FOR_SHARE = sql` for share of t`;

/** The belongsTo and Media fields set (non-null) in `valid`, with what they must refer to. */
function references(deps: RecordsDeps, valid: ValidData): Reference[] {
  return valid.columns.flatMap((c, i): Reference[] => {
    const type = c.field?.type;
    if (valid.values[i] === null) return [];
    if (type?.kind === 'media') {
      return [{ field: c.field!, table: MEDIA_TABLE, what: 'a media item', live: COMMITTED, lock: true, value: valid.values[i] }];
    }
    if (type?.kind !== 'belongsTo') return [];
    const target = deps.models.get(type.model)!;
    return [{ field: c.field!, table: target.table, what: `a ${target.name}`, live: sql.empty, lock: false, value: valid.values[i] }];
  });
}

/** SQL true when the reference is a live row of its table in the caller's tenant. */
function referenceSql(ref: Reference, caller: Caller): Sql {
  return sql`exists (select 1 from ${ref.table} t where t."id" = ${sql.value(ref.value, 'text')} and t."deleted_at" is null${ref.live}
    and ${caller.scope.predicate()}${ref.lock ? FOR_SHARE : sql.empty})`;
}

/** A belongsTo or Media field must point at a live row of the same tenant: no cross-tenant links. */
async function checkReferences(deps: RecordsDeps, t: Runner, valid: ValidData, caller: Caller) {
  for (const ref of references(deps, valid)) {
    const found = await deps.rows<{ ok: boolean }>(t, scopedQuery(caller.scope, sql`select ${referenceSql(ref, caller)} as ok`));
    if (!found[0].ok) throw invalid(ref.field.inputName, `${ref.field.inputName} does not refer to ${ref.what}`);
  }
}

const ID_AND_TENANT = sql`"id", "tenant_id"`;

/** The column list and the values of a new row: id and tenant first, then the written fields. */
function newRow(id: string, caller: Caller, valid: ValidData): { columns: Sql; values: Sql } {
  const columns = valid.columns.map((c) => c.ident);
  const values = valid.columns.map((c, i) => columnValue(valid.values[i], c.sqlType));
  return {
    columns: columns.length === 0 ? ID_AND_TENANT : sql`${ID_AND_TENANT}, ${sql.join(columns, ', ')}`,
    values: sql.join([sql.value(id, 'text'), caller.scope.stamp(), ...values], ', '),
  };
}

async function insertRow(deps: RecordsDeps, t: Tx, info: ModelInfo, id: string, caller: Caller, valid: ValidData): Promise<Row> {
  const { columns, values } = newRow(id, caller, valid);
  const statement = sql`insert into ${info.table} as t (${columns}) values (${values}) returning ${info.selectList}`;
  const rows = await deps.rows<Row>(t, scopedQuery(caller.scope, statement));
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
  const event = deps.events.firstEvent({
    streamType: info.name, streamId: id, eventType: 'Created', actorId: actorOf(caller), tenantId: caller.scope.tenantId, eventId,
  }, CREATED);
  if (!event) return null;
  const { columns, values } = newRow(id, caller, valid);
  const refs = references(deps, valid).map((ref) => referenceSql(ref, caller));
  const source = refs.length > 0 ? sql`select ${values} where ${sql.join(refs, ' and ')}` : sql`values (${values})`;
  const audited = deps.audit.entryFrom(createdEntry(info, caller, id, eventId, valid), CREATED);
  const query = scopedQuery(caller.scope, sql`
    with ${CREATED} as (insert into ${info.table} as t (${columns}) ${source} returning ${info.selectList}),
         appended as (${event})${audited ? sql`, audited as (${audited})` : sql.empty}${cteFragments(triggered)}
    select ${CREATED}.* from ${CREATED}`);
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
  const statement = sql`select ${info.selectList} from ${info.table} t
    where t."id" = any(${sql.value(ids, 'text[]')}) and ${caller.scope.predicate()}${lock ? FOR_UPDATE : sql.empty}`;
  return deps.rows<Row>(t, scopedQuery(caller.scope, statement));
}

const FOR_UPDATE = sql` for update`;
const UPDATED_NOW = sql`"updated_at" = now()`;

function setList(valid: ValidData): Sql {
  const sets = valid.columns.map((c, i) => sql`${c.ident} = ${columnValue(valid.values[i], c.sqlType)}`);
  return sql.join([...sets, UPDATED_NOW], ', ');
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
  const rows = await deps.rows<Row>(t, scopedQuery(caller.scope, updateOneSql(deps, info, id, valid, caller)));
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
  const filter = sql`t."deleted_at" is null and ${caller.scope.predicate()} and ${compileWhere(info, where ?? {}, deps.limits.where)}`;
  const query = (statement: Sql) => scopedQuery(caller.scope, statement);
  return inTransaction(deps, info, async (t) => {
    let changes: Array<{ id: string; data: unknown; audit: Record<string, unknown> | null }>;
    // A watched model's old rows, locked before the write (the same rows the update then takes).
    const old = watched
      ? await deps.rows<Row>(t, query(sql`select ${info.selectList} from ${info.table} t where ${filter} order by t."id" for update`))
      : [];
    if (perRow) {
      // Hooks see (and may change) each row's patch, so rows are written one by one.
      const ids = await deps.rows<{ id: string }>(t, query(sql`select t."id" from ${info.table} t where ${filter} order by t."id" for update`));
      changes = [];
      for (const { id } of ids) {
        const updated = await updateOne(deps, t, info, caller, id, patch);
        changes.push({ id, data: updated.data, audit: updated.changes });
      }
    } else {
      await checkReferences(deps, t, patch, caller);
      const rows = await deps.rows<{ id: string; [CHANGES_COLUMN]?: Record<string, unknown> }>(t, query(updateManySql(deps, info, patch, filter, caller.scope)));
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

const CHANGES = sql.ident(CHANGES_COLUMN);

/** One live row's UPDATE; when entries keep changes, it reads the row's old values itself (`{field: [old, new]}`). */
function updateOneSql(deps: RecordsDeps, info: ModelInfo, id: string, valid: ValidData, caller: Caller): Sql {
  const set = setList(valid);
  if (!keepsChanges(deps)) {
    return sql`update ${info.table} as t set ${set}
      where t."id" = ${sql.value(id, 'text')} and t."deleted_at" is null and ${caller.scope.predicate()} returning ${info.selectList}`;
  }
  return sql`update ${info.table} as t set ${set}
      from (select ${priorColumns(valid, 'o')} from ${info.table} o
             where o."id" = ${sql.value(id, 'text')} and o."deleted_at" is null and ${caller.scope.predicate('o')} for update) prior
     where t."id" = prior."id" and ${caller.scope.predicate()} returning ${info.selectList}, ${changesSql(info, valid, 'prior', 't')} as ${CHANGES}`;
}

/** The bulk UPDATE; when entries keep changes, it reads the old values of the locked rows itself. */
function updateManySql(deps: RecordsDeps, info: ModelInfo, patch: ValidData, filter: Sql, scope: Caller['scope']): Sql {
  if (!keepsChanges(deps)) return sql`update ${info.table} as t set ${setList(patch)} where ${filter} returning t."id"`;
  return sql`update ${info.table} as u set ${setList(patch)}
    from (select ${priorColumns(patch, 't')} from ${info.table} t where ${filter} for update) prior
   where u."id" = prior."id" and ${scope.predicate('u')} returning u."id", ${changesSql(info, patch, 'prior', 'u')} as ${CHANGES}`;
}
