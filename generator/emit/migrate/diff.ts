/** Compares the previous snapshot's IR with the new IR; returns the changes in run order. */
import type { Field, FieldKind, FieldType, Model, SchemaIR } from '../../../runtime/ir/types.ts';
import { wantsIndex } from '../sql.ts';
import { PHASE, type Change } from './changes.ts';

export function diffSchemas(previous: SchemaIR | null, next: SchemaIR): Change[] {
  const before = new Map((previous?.models ?? []).map((m) => [m.name, m]));
  const after = new Map(next.models.map((m) => [m.name, m]));
  const changes: Change[] = [];
  for (const model of next.models) {
    const old = before.get(model.name);
    changes.push(...(old ? diffModel(old, model) : createModel(model)));
  }
  for (const model of previous?.models ?? []) {
    if (!after.has(model.name)) changes.push({ kind: 'dropTable', model });
  }
  return changes.map((change, i) => ({ change, i })).sort((a, b) => PHASE[a.change.kind] - PHASE[b.change.kind] || a.i - b.i).map((x) => x.change);
}

function createModel(model: Model): Change[] {
  const keys: Change[] = model.fields
    .filter((f) => f.type.kind === 'belongsTo')
    .map((field) => ({ kind: 'addForeignKey', model: model.name, table: model.table, field }));
  return [{ kind: 'createTable', model }, ...keys];
}

/** Fields are matched by column: a field whose column changed is a drop plus an add. */
function diffModel(old: Model, model: Model): Change[] {
  const on = { model: model.name, table: model.table };
  const oldByColumn = new Map(old.fields.filter((f) => f.column).map((f) => [f.column!, f]));
  const newColumns = new Set(model.fields.map((f) => f.column));
  const changes: Change[] = [];
  for (const field of model.fields) {
    if (field.column === null) continue;
    const from = oldByColumn.get(field.column);
    if (!from) {
      changes.push({ kind: 'addColumn', ...on, field });
      if (field.type.kind === 'belongsTo') changes.push({ kind: 'addForeignKey', ...on, field });
    } else changes.push(...diffField(from, field, on));
  }
  for (const field of old.fields) {
    if (field.column !== null && !newColumns.has(field.column)) changes.push({ kind: 'dropColumn', model: old.name, table: old.table, field });
  }
  return changes;
}

function diffField(from: Field, field: Field, on: { model: string; table: string }): Change[] {
  const changes: Change[] = [];
  const typeChanged = typeShape(from.type) !== typeShape(field.type);
  if (typeChanged) {
    changes.push({ kind: 'alterType', ...on, from, field });
    if (field.type.kind === 'belongsTo') changes.push({ kind: 'addForeignKey', ...on, field });
  } else {
    if (enumValuesDiffer(from.type, field.type)) changes.push({ kind: 'replaceCheck', ...on, from, field });
    if (from.default !== field.default) changes.push({ kind: 'setDefault', ...on, field });
  }
  if (!from.required && field.required) changes.push({ kind: 'setRequired', ...on, field });
  if (from.required && !field.required) changes.push({ kind: 'dropRequired', ...on, field });
  if (wantsIndex(from) !== wantsIndex(field)) changes.push({ kind: wantsIndex(field) ? 'addIndex' : 'dropIndex', ...on, field, unique: false });
  if (from.unique !== field.unique) changes.push({ kind: field.unique ? 'addIndex' : 'dropIndex', ...on, field, unique: true });
  return changes;
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
