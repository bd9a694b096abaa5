/** Compares the previous snapshot's IR with the new IR; returns the changes in run order. */
import type { Field, FieldKind, FieldType, Model, SchemaIR } from '../../../runtime/ir/types.ts';
import { PHASE, type Change, type IndexReason } from './changes.ts';
import { CURRENT_LAYOUT, DISTRIBUTABLE_LAYOUT, indexesOf, type Layout } from './indexes.ts';

export interface DiffInput {
  readonly previous: SchemaIR | null;
  /** The index layout the previous snapshot's database has. */
  readonly previousLayout: Layout;
  readonly next: SchemaIR;
  /** `Model.field` -> the field name it was renamed from (`@renamedFrom`). */
  readonly renames: ReadonlyMap<string, string>;
}

export function diffSchemas(input: DiffInput): Change[] {
  const { previous, next } = input;
  const before = new Map((previous?.models ?? []).map((m) => [m.name, m]));
  const after = new Map(next.models.map((m) => [m.name, m]));
  const changes: Change[] = [];
  for (const model of next.models) {
    const old = before.get(model.name);
    changes.push(...(old ? [...diffModel(old, model, input.renames), ...diffIndexes(old, model, input.previousLayout)] : createModel(model)));
    if (old && input.previousLayout < DISTRIBUTABLE_LAYOUT) changes.push(...rekey(old, model));
    if (old && input.previousLayout === DISTRIBUTABLE_LAYOUT) changes.push(...relax(old, model));
  }
  for (const model of previous?.models ?? []) {
    if (after.has(model.name)) continue;
    if (input.previousLayout < DISTRIBUTABLE_LAYOUT) changes.push(...releaseKeys(model, model.fields));
    changes.push({ kind: 'dropTable', model });
  }
  return changes.map((change, i) => ({ change, i })).sort((a, b) => PHASE[a.change.kind] - PHASE[b.change.kind] || a.i - b.i).map((x) => x.change);
}

function createModel(model: Model): Change[] {
  const keys: Change[] = model.fields
    .filter((f) => f.type.kind === 'belongsTo')
    .map((field) => ({ kind: 'addForeignKey', model: model.name, table: model.table, field, newTable: true }));
  return [{ kind: 'createTable', model }, ...keys];
}

/**
 * Fields are matched by column. A field on a new column whose source (the
 * field of the same name, or the one it is `@renamedFrom`) lost its column
 * moves by expand/contract; any other new column is an add, any column gone
 * a drop: a rename is never guessed.
 */
function diffModel(old: Model, model: Model, renames: ReadonlyMap<string, string>): Change[] {
  const on = { model: model.name, table: model.table };
  const oldByColumn = new Map(old.fields.filter((f) => f.column).map((f) => [f.column!, f]));
  const oldByName = new Map(old.fields.map((f) => [f.name, f]));
  const newColumns = new Set(model.fields.map((f) => f.column));
  const movedFrom = new Set<string>();
  const changes: Change[] = [];
  for (const field of model.fields) {
    if (field.column === null) continue;
    const from = oldByColumn.get(field.column);
    if (from) {
      changes.push(...diffField(from, field, on));
      continue;
    }
    const renamed = renames.get(`${model.name}.${field.name}`);
    const source = oldByName.get(renamed !== undefined && !oldByName.has(field.name) ? renamed : field.name);
    if (source?.column && !newColumns.has(source.column)) {
      movedFrom.add(source.column);
      const reason = source.name === field.name ? 'type' : 'rename';
      changes.push({ kind: 'expandColumn', ...on, field, from: source, reason }, { kind: 'contractColumn', ...on, field, from: source, reason });
    } else changes.push({ kind: 'addColumn', ...on, field });
    if (field.type.kind === 'belongsTo') changes.push({ kind: 'addForeignKey', ...on, field, newTable: false });
  }
  for (const field of old.fields) {
    if (field.column === null || newColumns.has(field.column) || movedFrom.has(field.column)) continue;
    const gone = { model: old.name, table: old.table, field };
    if (field.required && field.default === undefined) changes.push({ kind: 'releaseColumn', ...gone });
    changes.push({ kind: 'dropColumn', ...gone });
  }
  return changes;
}

function diffField(from: Field, field: Field, on: { model: string; table: string }): Change[] {
  const changes: Change[] = [];
  const typeChanged = typeShape(from.type) !== typeShape(field.type);
  if (typeChanged) {
    changes.push({ kind: 'alterType', ...on, from, field });
    if (field.type.kind === 'belongsTo') changes.push({ kind: 'addForeignKey', ...on, field, newTable: false });
  } else {
    if (enumValuesDiffer(from.type, field.type)) changes.push({ kind: 'replaceCheck', ...on, from, field });
    if (from.default !== field.default) changes.push({ kind: 'setDefault', ...on, field });
  }
  if (!from.required && field.required) changes.push({ kind: 'setRequired', ...on, field });
  if (from.required && !field.required) changes.push({ kind: 'dropRequired', ...on, field });
  return changes;
}

/**
 * Indexes by name: what the database has (the old model in the previous
 * layout) against what the new build wants. Indexes of columns that are
 * dropped go with their column.
 */
function diffIndexes(old: Model, model: Model, layout: Layout): Change[] {
  const had = new Map(indexesOf(old, layout).map((i) => [i.name, i]));
  const wanted = indexesOf(model, CURRENT_LAYOUT);
  const wantedNames = new Set(wanted.map((i) => i.name));
  const sameSchema = new Set(indexesOf(old, CURRENT_LAYOUT).map((i) => i.name));
  const oldColumns = new Set(old.fields.map((f) => f.column));
  const columns = new Set(model.fields.map((f) => f.column));
  const changes: Change[] = layout < DISTRIBUTABLE_LAYOUT ? [{ kind: 'relayout', model: model.name, from: layout }] : [];
  for (const index of wanted) {
    if (had.has(index.name)) continue;
    const reason: IndexReason = index.field && !oldColumns.has(index.field.column) ? 'column' : sameSchema.has(index.name) ? 'layout' : 'tag';
    changes.push({ kind: 'addIndex', model: model.name, index, reason });
  }
  for (const index of had.values()) {
    if (wantedNames.has(index.name) || (index.field && !columns.has(index.field.column))) continue;
    const reason: IndexReason = !sameSchema.has(index.name) && layout < CURRENT_LAYOUT ? 'layout' : 'tag';
    changes.push({ kind: 'dropIndex', model: model.name, index, reason });
  }
  return changes;
}

/**
 * Layout 3 on a table of an earlier layout (ADR 025): `tenant_id` not null,
 * the primary key `(tenant_id, id)`, each kept belongsTo key made composite.
 * The old key of a belongsTo column that goes (dropped or moved, in the
 * contract) is dropped now: it holds the target's old primary key, which this
 * migration replaces. A belongsTo whose type changes drops its key itself.
 */
function rekey(old: Model, model: Model): Change[] {
  const on = { model: model.name, table: model.table };
  const byColumn = new Map(model.fields.filter((f) => f.column).map((f) => [f.column!, f]));
  const swapped: Change[] = [];
  const gone: Field[] = [];
  for (const from of old.fields) {
    if (from.type.kind !== 'belongsTo') continue;
    const to = byColumn.get(from.column!);
    if (!to) gone.push(from);
    else if (to.type.kind === 'belongsTo' && to.type.model === from.type.model) swapped.push({ kind: 'swapForeignKey', ...on, field: to });
  }
  return [
    { kind: 'tenantNotNull', ...on },
    { kind: 'keyIndex', ...on },
    ...swapped,
    ...releaseKeys(old, gone),
    { kind: 'swapPrimaryKey', ...on },
    { kind: 'releaseTenant', ...on },
  ];
}

/**
 * Layout 3 -> 4 (ADR 025, "Relation keys on Citus"): each optional belongsTo
 * the database keys `on delete set null (x_id)` and the new build keeps (same
 * column, same target) gets its new key beside the old one; the contract drops
 * the old one. A belongsTo that goes or changes its target drops its key itself.
 */
function relax(old: Model, model: Model): Change[] {
  const on = { model: model.name, table: model.table };
  const byColumn = new Map(model.fields.filter((f) => f.column).map((f) => [f.column!, f]));
  return old.fields.flatMap((from): Change[] => {
    if (from.type.kind !== 'belongsTo' || from.required) return [];
    const to = byColumn.get(from.column!);
    if (to?.type.kind !== 'belongsTo' || to.type.model !== from.type.model) return [];
    return [{ kind: 'relaxForeignKey', ...on, field: to }, { kind: 'dropSetNullKey', ...on, field: to }];
  });
}

function releaseKeys(old: Model, fields: readonly Field[]): Change[] {
  return fields.filter((f) => f.type.kind === 'belongsTo').map((field) => ({ kind: 'releaseForeignKey', model: old.name, table: old.table, field }));
}

/** What the column stores, ignoring enum values and names (those only change the CHECK). */
const SHAPE: Record<FieldKind, (type: FieldType) => string> = {
  scalar: (t) => (t.kind === 'scalar' ? `scalar:${t.scalar}` : ''),
  enum: () => 'enum',
  embed: (t) => (t.kind === 'embed' ? `embed:${t.embed}:${t.list}` : ''),
  list: (t) => (t.kind === 'list' ? `list:${t.of}` : ''),
  belongsTo: (t) => (t.kind === 'belongsTo' ? `belongsTo:${t.model}` : ''),
  hasMany: (t) => (t.kind === 'hasMany' ? `hasMany:${t.model}` : ''),
  media: () => 'media',
};

function typeShape(type: FieldType): string {
  return SHAPE[type.kind](type);
}

function enumValuesDiffer(a: FieldType, b: FieldType): boolean {
  if (a.kind !== 'enum' || b.kind !== 'enum') return false;
  return [...a.values].sort().join('\u0000') !== [...b.values].sort().join('\u0000');
}

