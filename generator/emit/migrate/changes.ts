/**
 * Schema changes between two IRs, as data. The diff produces them; each kind
 * has a phase (ordering inside one migration), a summary (the header line) and
 * a SQL converter (convert.ts), all held in Records keyed by kind so a new
 * kind without one of them fails type-checking.
 */
import type { Field, Model } from '../../../runtime/ir/types.ts';
import { describeType } from '../../ir/field-type.ts';
import { sqlLiteral } from '../sql.ts';

interface OnField {
  readonly model: string;
  readonly table: string;
  readonly field: Field;
}

export type Change =
  | { readonly kind: 'createTable'; readonly model: Model }
  | { readonly kind: 'dropTable'; readonly model: Model }
  | ({ readonly kind: 'addColumn' } & OnField)
  | ({ readonly kind: 'dropColumn' } & OnField)
  | ({ readonly kind: 'alterType'; readonly from: Field } & OnField)
  | ({ readonly kind: 'replaceCheck'; readonly from: Field } & OnField)
  | ({ readonly kind: 'setRequired' } & OnField)
  | ({ readonly kind: 'dropRequired' } & OnField)
  | ({ readonly kind: 'setDefault' } & OnField)
  | ({ readonly kind: 'addIndex'; readonly unique: boolean } & OnField)
  | ({ readonly kind: 'dropIndex'; readonly unique: boolean } & OnField)
  /** Added after every table of the migration exists, so relations may point forward or in cycles. */
  | ({ readonly kind: 'addForeignKey' } & OnField);

export type ChangeKind = Change['kind'];
export type ChangeOf<K extends ChangeKind> = Extract<Change, { kind: K }>;

/** Lower runs first: drops of constraints, then tables and columns, then keys, then destructive drops. */
export const PHASE: Record<ChangeKind, number> = {
  replaceCheck: 1,
  alterType: 1,
  createTable: 2,
  addColumn: 2,
  setRequired: 3,
  dropRequired: 3,
  setDefault: 3,
  dropIndex: 3,
  addIndex: 4,
  addForeignKey: 5,
  dropColumn: 6,
  dropTable: 7,
};

type Describe<K extends ChangeKind> = (change: ChangeOf<K>) => string | null;

const where = (c: OnField) => `${c.model}.${c.field.name}`;

function fieldFacts(field: Field): string {
  const facts = [describeType(field.type), field.required ? 'required' : 'optional'];
  if (field.default !== undefined) facts.push(`default ${sqlLiteral(field.default)}`);
  return facts.join(', ');
}

function valueChanges(from: Field, to: Field): string {
  const before = from.type.kind === 'enum' ? from.type.values : [];
  const after = to.type.kind === 'enum' ? to.type.values : [];
  const added = after.filter((v) => !before.includes(v)).map((v) => `'${v}'`);
  const removed = before.filter((v) => !after.includes(v)).map((v) => `'${v}'`);
  return [added.length ? `add ${added.join(', ')}` : '', removed.length ? `remove ${removed.join(', ')}` : ''].filter(Boolean).join('; ');
}

const SUMMARY: { [K in ChangeKind]: Describe<K> } = {
  createTable: (c) => `add model ${c.model.name}`,
  dropTable: (c) => `drop model ${c.model.name}`,
  addColumn: (c) => `add field ${where(c)} (${fieldFacts(c.field)})`,
  dropColumn: (c) => `drop field ${where(c)}`,
  alterType: (c) => `change type of ${where(c)} from ${describeType(c.from.type)} to ${describeType(c.field.type)}`,
  replaceCheck: (c) => `change values of ${where(c)}: ${valueChanges(c.from, c.field)}`,
  setRequired: (c) => `make ${where(c)} required`,
  dropRequired: (c) => `make ${where(c)} optional`,
  setDefault: (c) => (c.field.default === undefined ? `drop default of ${where(c)}` : `set default of ${where(c)} to ${sqlLiteral(c.field.default)}`),
  addIndex: (c) => `add ${c.unique ? 'unique' : 'index'} on ${where(c)}`,
  dropIndex: (c) => `drop ${c.unique ? 'unique' : 'index'} on ${where(c)}`,
  addForeignKey: () => null,
};

export function summarize(change: Change): string | null {
  return (SUMMARY[change.kind] as Describe<ChangeKind>)(change);
}

const DESTRUCTIVE: { [K in ChangeKind]: (change: ChangeOf<K>) => string | null } = {
  createTable: () => null,
  dropTable: (c) => `dropping model ${c.model.name} deletes table "${c.model.table}" and all its rows`,
  addColumn: () => null,
  dropColumn: (c) => `dropping ${where(c)} deletes the column "${c.field.column}" and its data`,
  alterType: (c) => (widensToText(c.from, c.field) ? null : `changing the type of ${where(c)} converts existing values and fails or loses data when they do not fit`),
  replaceCheck: (c) => (valueChanges(c.from, c.field).includes('remove') ? `removing values of ${where(c)} fails while rows still hold them` : null),
  setRequired: (c) => `making ${where(c)} required fails while rows hold no value${c.field.default === undefined ? '' : ' (nulls are first set to the default)'}`,
  dropRequired: () => null,
  setDefault: () => null,
  addIndex: () => null,
  dropIndex: () => null,
  addForeignKey: () => null,
};

/** An enum becoming a plain string keeps every value: only its CHECK goes. */
function widensToText(from: Field, to: Field): boolean {
  return from.type.kind === 'enum' && to.type.kind === 'scalar' && to.type.scalar === 'string';
}

/** Why a change can lose data or fail on existing rows; null when it is safe. */
export function destructiveReason(change: Change): string | null {
  return (DESTRUCTIVE[change.kind] as (c: Change) => string | null)(change);
}
