/**
 * Which column a field lives in depends on history, so it is settled against
 * the previous snapshot before anything is emitted: a field keeps the column
 * its snapshot records while its SQL type stays; when the SQL type changes
 * (a rewrite under ACCESS EXCLUSIVE in place), it moves to a fresh column
 * (`amount` -> `amount_v2`) that expand/contract fills and swaps in.
 */
import type { Field, Model, SchemaIR } from '../../../runtime/ir/types.ts';
import { deepFreeze } from '../../ir/index.ts';
import { nextColumnName } from '../../ir/naming.ts';
import { sqlType } from '../sql.ts';

export function placeColumns(ir: SchemaIR, previous: SchemaIR | null): SchemaIR {
  if (!previous) return ir;
  const before = new Map(previous.models.map((m) => [m.name, m]));
  const models = ir.models.map((model) => {
    const old = before.get(model.name);
    return old ? placeModel(model, old) : model;
  });
  return models.every((m, i) => m === ir.models[i]) ? ir : deepFreeze({ ...ir, models });
}

function placeModel(model: Model, old: Model): Model {
  const oldByName = new Map(old.fields.map((f) => [f.name, f]));
  const taken = new Set([...old.fields, ...model.fields].flatMap((f) => (f.column ? [f.column] : [])));
  let changed = false;
  const fields = model.fields.map((field): Field => {
    const from = oldByName.get(field.name);
    if (field.column === null || !from?.column) return field;
    const column = sqlType(from.type) === sqlType(field.type) ? from.column : nextColumnName(from.column, taken);
    if (column === field.column) return field;
    taken.add(column);
    changed = true;
    return { ...field, column };
  });
  return changed ? { ...model, fields } : model;
}
