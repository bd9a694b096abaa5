/**
 * Mutations that write a model row: create, update, updateMany. Each writes
 * the row and appends its event in one transaction, running the operator's
 * hooks inside it. The row lock taken by the write serialises the events of
 * one record, so no event is lost and no version repeats.
 */
import { newId } from '../ids.ts';
import type { HookContext, ModelHooks } from '../service/types.ts';
import { tenantSql, type Caller } from './access.ts';
import type { RecordsDeps, Runner } from './deps.ts';
import { fromDatabaseError, invalid, notFound, RecordError } from './errors.ts';
import type { Row } from './include.ts';
import type { ModelInfo } from './model.ts';
import { Params, toDbValue } from './sql.ts';
import type { ValidData } from './validate.ts';
import { compileWhere } from './where.ts';
import type { Tx } from '../db/index.ts';
import { NOTIFY_COLUMN } from '../events/index.ts';

export const actorOf = (caller: Caller) => caller.principal?.userId ?? null;

export function hooksOf(deps: RecordsDeps, info: ModelInfo): ModelHooks<Row> {
  return deps.resolvers[info.name] ?? {};
}

export function hookContext(info: ModelInfo, caller: Caller, tx: Tx): HookContext {
  return { model: info.name, principal: caller.principal, tenantId: caller.tenantId, tx };
}

/** Runs `work` in a transaction; input-caused database errors become VALIDATION_ERRORs. */
export async function inTransaction<T>(deps: RecordsDeps, info: ModelInfo, work: (t: Tx) => Promise<T>): Promise<T> {
  try {
    return await deps.db.tx(work);
  } catch (error) {
    if (error instanceof RecordError) throw error;
    throw fromDatabaseError(error, info.fieldOfColumn) ?? error;
  }
}

type FieldInfo = NonNullable<ValidData['columns'][number]['field']>;

interface Reference {
  readonly field: FieldInfo;
  readonly target: ModelInfo;
  readonly value: unknown;
}

/** The belongsTo fields set (non-null) in `valid`, with their target models and values. */
function references(deps: RecordsDeps, valid: ValidData): Reference[] {
  return valid.columns.flatMap((c, i) => {
    const type = c.field?.type;
    if (type?.kind !== 'belongsTo' || valid.values[i] === null) return [];
    return [{ field: c.field!, target: deps.models.get(type.model)!, value: valid.values[i] }];
  });
}

/** SQL true when the reference is a live record of its target model in the caller's tenant. */
function referenceSql(ref: Reference, caller: Caller, p: Params): string {
  return `exists (select 1 from ${ref.target.table} t where t."id" = ${p.add(ref.value, 'text')} and t."deleted_at" is null and ${tenantSql(caller, p)})`;
}

/** A belongsTo must point at a live record of the same tenant: no cross-tenant links. */
async function checkReferences(deps: RecordsDeps, t: Runner, valid: ValidData, caller: Caller) {
  for (const ref of references(deps, valid)) {
    const p = new Params();
    const found = await deps.rows<{ ok: boolean }>(t, { text: `select ${referenceSql(ref, caller, p)} as ok`, values: p.values });
    if (!found[0].ok) throw invalid(ref.field.inputName, `${ref.field.inputName} does not refer to a ${ref.target.name}`);
  }
}

async function insertRow(deps: RecordsDeps, t: Tx, info: ModelInfo, id: string, caller: Caller, valid: ValidData): Promise<Row> {
  const p = new Params();
  const columns = ['"id"', '"tenant_id"', ...valid.columns.map((c) => c.quoted)];
  const values = [p.add(id, 'text'), p.add(caller.tenantId, 'text'),
    ...valid.columns.map((c, i) => p.add(toDbValue(valid.values[i], c.sqlType), c.sqlType))];
  const text = `insert into ${info.table} as t (${columns.join(', ')}) values (${values.join(', ')}) returning ${info.selectList}`;
  const rows = await deps.rows<Row>(t, { text, values: p.values });
  return rows[0];
}

export async function createRecord(deps: RecordsDeps, caller: Caller, model: unknown, data: unknown): Promise<Row> {
  const info = deps.model(model, 'create', caller);
  let valid = deps.validator.data(info, data, 'create');
  const hooks = hooksOf(deps, info);
  const id = newId();
  if (!hooks.beforeCreate && !hooks.afterCreate) {
    const row = await createInOneStatement(deps, info, id, caller, valid);
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
    await deps.events.append(t, { streamType: info.name, streamId: id, eventType: 'Created', data: row, actorId: actorOf(caller), tenantId: caller.tenantId });
    if (hooks.afterCreate) await hooks.afterCreate(row, hookCtx);
    return row;
  });
}

/**
 * Create without hooks: row, reference checks, event and change notice in one
 * autocommit statement, one round trip. Null when the history policy does not
 * keep the model's events (the transactional path then records the gap).
 */
async function createInOneStatement(deps: RecordsDeps, info: ModelInfo, id: string, caller: Caller, valid: ValidData): Promise<Row | null> {
  const p = new Params();
  const columns = ['"id"', '"tenant_id"', ...valid.columns.map((c) => c.quoted)];
  const values = [p.add(id, 'text'), p.add(caller.tenantId, 'text'),
    ...valid.columns.map((c, i) => p.add(toDbValue(valid.values[i], c.sqlType), c.sqlType))];
  const refs = references(deps, valid).map((ref) => referenceSql(ref, caller, p));
  const source = refs.length > 0 ? `select ${values.join(', ')} where ${refs.join(' and ')}` : `values (${values.join(', ')})`;
  const row = { text: `insert into ${info.table} as t (${columns.join(', ')}) ${source} returning ${info.selectList}`, values: p.values };
  const query = deps.events.withCreatedEvent(row, {
    streamType: info.name, streamId: id, eventType: 'Created', actorId: actorOf(caller), tenantId: caller.tenantId,
  });
  if (!query) return null;
  let rows: Row[];
  try {
    rows = await deps.rows<Row>(deps.db, query);
  } catch (error) {
    throw fromDatabaseError(error, info.fieldOfColumn) ?? error;
  }
  if (rows.length === 0) {
    await checkReferences(deps, deps.db, valid, caller); // names the field that failed
    throw invalid('data', 'a referenced record does not exist');
  }
  const { [NOTIFY_COLUMN]: _notified, ...created } = rows[0];
  return created;
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
  const p = new Params();
  const text = `update ${info.table} as t set ${setList(valid, p)}
    where t."id" = ${p.add(id, 'text')} and t."deleted_at" is null and ${tenantSql(caller, p)} returning ${info.selectList}`;
  const rows = await deps.rows<Row>(t, { text, values: p.values });
  if (rows.length === 0) throw notFound(info.name, id);
  if (hooks.afterUpdate) await hooks.afterUpdate(rows[0], hookCtx);
  return { row: rows[0], data: valid.data };
}

export async function updateRecord(deps: RecordsDeps, caller: Caller, model: unknown, id: string, data: unknown): Promise<Row> {
  const info = deps.model(model, 'update', caller);
  const patch = deps.validator.data(info, data, 'update');
  return inTransaction(deps, info, async (t) => {
    const { row, data: changed } = await updateOne(deps, t, info, caller, id, patch);
    await deps.events.append(t, { streamType: info.name, streamId: id, eventType: 'Updated', data: changed, actorId: actorOf(caller), tenantId: caller.tenantId });
    return row;
  });
}

/** Updates every live row matching `where`; one Updated event per row (appendMany). Returns the count. */
export async function updateMany(deps: RecordsDeps, caller: Caller, model: unknown, where: unknown, data: unknown): Promise<number> {
  const info = deps.model(model, 'update', caller);
  const patch = deps.validator.data(info, data, 'update');
  const hooks = hooksOf(deps, info);
  const perRow = Boolean(hooks.beforeUpdate || hooks.afterUpdate);
  const p = new Params();
  const filter = `t."deleted_at" is null and ${tenantSql(caller, p)} and ${compileWhere(info, where ?? {}, p)}`;
  return inTransaction(deps, info, async (t) => {
    let changes: Array<{ id: string; data: unknown }>;
    if (perRow) {
      // Hooks see (and may change) each row's patch, so rows are written one by one.
      const ids = await deps.rows<{ id: string }>(t, { text: `select t."id" from ${info.table} t where ${filter} order by t."id" for update`, values: p.values });
      changes = [];
      for (const { id } of ids) changes.push({ id, data: (await updateOne(deps, t, info, caller, id, patch)).data });
    } else {
      await checkReferences(deps, t, patch, caller);
      const text = `update ${info.table} as t set ${setList(patch, p)} where ${filter} returning t."id"`;
      changes = (await deps.rows<{ id: string }>(t, { text, values: p.values })).map(({ id }) => ({ id, data: patch.data }));
    }
    await deps.events.appendMany(t, changes.map((c) => ({
      streamType: info.name, streamId: c.id, eventType: 'Updated', data: c.data, actorId: actorOf(caller), tenantId: caller.tenantId,
    })));
    return changes.length;
  });
}
