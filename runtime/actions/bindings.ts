/**
 * The bindings of CONTRACT section 11, compiled once per service: for each
 * model and event, the actions it enqueues, with their `when` condition and
 * the `input` each receives. Both are available twice, as a test on rows in
 * hand (the transactional path: updates, deletes, updateMany) and as SQL over
 * the created row (a create folded into one statement).
 */
import type { ActionBinding, ActionDef, ActionInput, EventCondition, Literal, RecordEvent, SchemaIR } from '../ir/types.ts';
import type { Binder } from '../audit/index.ts';
import type { ColumnInfo, ModelInfo } from '../records/model.ts';
import { automationRedaction, type Row, type WrittenRecord } from '../records/index.ts';

export interface CompiledBinding {
  readonly action: ActionDef;
  readonly binding: ActionBinding;
  /** True when the write satisfies `when` (no `when`: always). */
  matches(write: WrittenRecord): boolean;
  /** `when.equals` over the created row `row` as SQL; null when there is none. */
  whereSql(row: string, p: Binder): string | null;
  /** The action's input taken from a written row. */
  inputOf(record: Row | null): Record<string, unknown>;
  /** The same as a jsonb SQL expression over the created row `row`. */
  inputSql(row: string, p: Binder): string;
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

/** The column a condition or input names: IR name (`company`) or JSON name (`companyId`). */
function columnOf(info: ModelInfo, name: string): ColumnInfo | undefined {
  return info.columns.find((c) => c.name === name || c.field?.name === name);
}

function compileBinding(info: ModelInfo, action: ActionDef, binding: ActionBinding): CompiledBinding {
  const when = binding.when ? compileCondition(info, binding.when) : null;
  const inputColumns = inputNames(info, action.input);
  return {
    action,
    binding,
    matches: (write) => when === null || when.matches(write),
    whereSql: (row, p) => when?.sql(row, p) ?? null,
    inputOf: (record) => Object.fromEntries(inputColumns.map((name) => [name, record?.[name] ?? null])),
    inputSql: (row, p) => `jsonb_build_object(${inputColumns.map((name) => `${p.add(name, 'text')}, ${row}.${quote(name)}`).join(', ')})`,
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

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

interface Condition {
  matches(write: WrittenRecord): boolean;
  sql(row: string, p: Binder): string | null;
}

function compileCondition(info: ModelInfo, when: EventCondition): Condition {
  const changed = when.changed.map((name) => columnOf(info, name)!);
  const equals = Object.entries(when.equals).map(([name, literal]) => ({ column: columnOf(info, name)!, literal }));
  return {
    matches(write) {
      const record = write.record ?? write.old;
      if (changed.length > 0 && !changed.some((c) => fieldChanged(write, c))) return false;
      return equals.every(({ column, literal }) => sameValue(column, record?.[column.name] ?? null, literal));
    },
    sql(row, p) {
      if (equals.length === 0) return null;
      return equals.map(({ column, literal }) => equalsSql(row, column, literal, p)).join(' and ');
    },
  };
}

/** The write changed the field's value (setting it to what it was is no change). */
function fieldChanged(write: WrittenRecord, column: ColumnInfo): boolean {
  if (!write.old || !write.record) return write.changed.includes(column.name);
  return JSON.stringify(write.old[column.name] ?? null) !== JSON.stringify(write.record[column.name] ?? null);
}

function sameValue(column: ColumnInfo, value: unknown, literal: Literal | null): boolean {
  if (literal === null || value === null) return literal === value;
  if (column.sqlType === 'timestamptz') return Date.parse(String(value)) === Date.parse(String(literal));
  return value === literal;
}

/** Rows of the created CTE are API-shaped: timestamps are ISO text, the rest keeps its SQL type. */
function equalsSql(row: string, column: ColumnInfo, literal: Literal | null, p: Binder): string {
  const value = `${row}.${quote(column.name)}`;
  if (literal === null) return `${value} is null`;
  if (column.sqlType === 'timestamptz') return `${value}::timestamptz = ${p.add(literal, 'timestamptz')}`;
  return `${value} = ${p.add(literal, column.sqlType)}`;
}
