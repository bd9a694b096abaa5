/**
 * The bindings of CONTRACT section 11, compiled once per service: for each
 * model and event, the actions it enqueues, with their `when` condition and
 * the `input` each receives. Both are available twice, as a test on rows in
 * hand (the transactional path: updates, deletes, updateMany) and as SQL over
 * the created row (a create folded into one statement); the condition is the
 * one workflows evaluate too (runtime/automation/conditions.ts).
 */
import type { ActionBinding, ActionDef, ActionInput, RecordEvent, SchemaIR } from '../ir/types.ts';
import { columnOf, compileCondition } from '../automation/index.ts';
import { sql, type Sql } from '../sql/index.ts';
import type { ModelInfo } from '../records/model.ts';
import { automationRedaction, type Row, type WrittenRecord } from '../records/index.ts';

export interface CompiledBinding {
  readonly action: ActionDef;
  readonly binding: ActionBinding;
  /** True when the write satisfies `when` (no `when`: always). */
  matches(write: WrittenRecord): boolean;
  /** `when.equals` over the created row `row` (an alias) as a fragment; null when there is none. */
  where(row: Sql): Sql | null;
  /** The action's input taken from a written row. */
  inputOf(record: Row | null): Record<string, unknown>;
  /** The same as a jsonb expression over the created row `row` (an alias). */
  input(row: Sql): Sql;
  /** A written row for the payload (`old`): `@sensitive` fields redacted unless the input names them. */
  redact(record: Row | null): Row | null;
}

export type BindingTable = ReadonlyMap<string, readonly CompiledBinding[]>;

export const bindingKey = (model: string, event: RecordEvent) => `${model}\u0000${event}`;

export function compileBindings(ir: SchemaIR, models: ReadonlyMap<string, ModelInfo>): BindingTable {
  const actions = new Map(ir.actions.map((a) => [a.name, a]));
  const table = new Map<string, CompiledBinding[]>();
  for (const binding of ir.bindings) {
    const info = models.get(binding.model);
    const action = actions.get(binding.action);
    if (!info || !action) throw new Error(`action binding ${binding.model}.${binding.event} -> ${binding.action}: unknown model or action`);
    const key = bindingKey(binding.model, binding.event);
    table.set(key, [...(table.get(key) ?? []), compileBinding(info, action, binding)]);
  }
  return table;
}

function compileBinding(info: ModelInfo, action: ActionDef, binding: ActionBinding): CompiledBinding {
  const when = compileCondition(info, binding.when ?? null);
  const inputColumns = inputNames(info, action.input);
  const inputKeys = inputColumns.map((name) => ({ key: sql.value(name, 'text'), column: sql.ident(name) }));
  const where = (row: Sql) => when.sql(row);
  const input = (row: Sql) => sql`jsonb_build_object(${sql.join(inputKeys.map(({ key, column }) => sql`${key}, ${row}.${column}`), ', ')})`;
  return {
    action,
    binding,
    matches: (write) => when.matches(write),
    where,
    inputOf: (record) => Object.fromEntries(inputColumns.map((name) => [name, record?.[name] ?? null])),
    input,
    redact: automationRedaction(info, new Set(inputColumns)),
  };
}

/**
 * JSON names of the record's columns the input takes: a pick's fields, or the
 * named fields the model also has. Naming a `@sensitive` field here is how a
 * binding declares it needs its value.
 */
function inputNames(info: ModelInfo, input: ActionInput): string[] {
  if (input.kind === 'pick') return input.fields.flatMap((name) => columnOf(info, name)?.name ?? []);
  return input.fields.flatMap((f) => info.columns.find((c) => c.name === f.name)?.name ?? []);
}
