/**
 * Schema changes between two IRs, as data. The diff produces them; each kind
 * has a phase (ordering inside one migration), a half (expand or contract), a
 * summary (the header line) and a converter to steps (convert.ts), all held in
 * Records keyed by kind so a new kind without one of them fails type-checking.
 */
import type { Field, Model } from '../../../runtime/ir/types.ts';
import { describeType } from '../../ir/field-type.ts';
import { sqlLiteral, sqlType } from '../sql.ts';
import type { IndexDef, Layout } from './indexes.ts';

interface OnField {
  readonly model: string;
  readonly table: string;
  readonly field: Field;
}

/** A field moving to a new column: a rename (`@renamedFrom`) or a type change that would rewrite the table. */
interface Moved extends OnField {
  readonly from: Field;
  readonly reason: 'rename' | 'type';
}

export type Change =
  | { readonly kind: 'createTable'; readonly model: Model }
  | { readonly kind: 'dropTable'; readonly model: Model }
  | ({ readonly kind: 'addColumn' } & OnField)
  | ({ readonly kind: 'dropColumn' } & OnField)
  /** A required column the new build no longer writes: nullable until its drop. */
  | ({ readonly kind: 'releaseColumn' } & OnField)
  /** A type change that keeps the SQL type (checks, references, defaults only). */
  | ({ readonly kind: 'alterType'; readonly from: Field } & OnField)
  | ({ readonly kind: 'expandColumn' } & Moved)
  | ({ readonly kind: 'contractColumn' } & Moved)
  | ({ readonly kind: 'replaceCheck'; readonly from: Field } & OnField)
  | ({ readonly kind: 'setRequired' } & OnField)
  | ({ readonly kind: 'dropRequired' } & OnField)
  | ({ readonly kind: 'setDefault' } & OnField)
  | { readonly kind: 'addIndex'; readonly model: string; readonly index: IndexDef; readonly reason: IndexReason }
  | { readonly kind: 'dropIndex'; readonly model: string; readonly index: IndexDef; readonly reason: IndexReason }
  /** Names the layout switch of a model in the header; its steps are the changes below and the addIndex/dropIndex changes. */
  | { readonly kind: 'relayout'; readonly model: string; readonly from: Layout }
  /** Layout 3: `tenant_id` filled with '' where null (a trigger fills old instances' writes), then not null. */
  | { readonly kind: 'tenantNotNull'; readonly model: string; readonly table: string }
  /** Layout 3: the unique `(tenant_id, id)` index the primary key will use, built concurrently. */
  | { readonly kind: 'keyIndex'; readonly model: string; readonly table: string }
  /** Layout 3: a belongsTo's key becomes `(tenant_id, x_id) -> (tenant_id, id)`, added beside the old one, validated, then the old one dropped. */
  | ({ readonly kind: 'swapForeignKey' } & OnField)
  /** Layout 3: the old key of a belongsTo column the contract drops goes now (it holds the target's old primary key). */
  | ({ readonly kind: 'releaseForeignKey' } & OnField)
  /** Layout 3: the primary key `(id)` swapped for `(tenant_id, id)` in one catalog-only step. */
  | { readonly kind: 'swapPrimaryKey'; readonly model: string; readonly table: string }
  /** Layout 3 contract: the trigger that filled old instances' null tenant goes once no old instance runs. */
  | { readonly kind: 'releaseTenant'; readonly model: string; readonly table: string }
  /** Layout 3 -> 4: an optional belongsTo's `set null` key gets an `on delete no action` one beside it, added NOT VALID and validated online. */
  | ({ readonly kind: 'relaxForeignKey' } & OnField)
  /** Layout 3 -> 4 contract: the `set null` key goes (no older build, which relies on it, runs), the new key takes its name. */
  | ({ readonly kind: 'dropSetNullKey' } & OnField)
  /** Added after every table of the migration exists, so relations may point forward or in cycles. */
  | ({ readonly kind: 'addForeignKey'; readonly newTable: boolean } & OnField);

/** Why an index comes or goes: a tag changed, the index layout changed, or its column is new (named by the column's own change). */
export type IndexReason = 'tag' | 'layout' | 'column';

export type ChangeKind = Change['kind'];
export type ChangeOf<K extends ChangeKind> = Extract<Change, { kind: K }>;

/**
 * Lower runs first: constraint replacements, then tables and columns, then
 * column facts, then indexes (new ones before the old ones they replace), then
 * foreign keys (they need the target's `(tenant_id, id)` index), then primary
 * keys (once no foreign key holds the old one), then old indexes (once the
 * keys that used them are replaced); the contract half last.
 */
export const PHASE: Record<ChangeKind, number> = {
  replaceCheck: 1,
  alterType: 1,
  createTable: 2,
  addColumn: 2,
  expandColumn: 2,
  setDefault: 3,
  setRequired: 3,
  dropRequired: 3,
  releaseColumn: 3,
  tenantNotNull: 3,
  relayout: 4,
  keyIndex: 4,
  addIndex: 4,
  addForeignKey: 5,
  swapForeignKey: 5,
  relaxForeignKey: 5,
  releaseForeignKey: 5,
  swapPrimaryKey: 6,
  dropIndex: 7,
  releaseTenant: 8,
  dropSetNullKey: 8,
  contractColumn: 8,
  dropColumn: 8,
  dropTable: 9,
};

/**
 * The contract half runs once no live instance runs an older build (the
 * runner checks): it removes what old instances still read and write.
 */
export const CONTRACT: Record<ChangeKind, boolean> = {
  replaceCheck: false,
  alterType: false,
  createTable: false,
  addColumn: false,
  expandColumn: false,
  setDefault: false,
  setRequired: false,
  dropRequired: false,
  releaseColumn: false,
  relayout: false,
  tenantNotNull: false,
  keyIndex: false,
  swapForeignKey: false,
  relaxForeignKey: false,
  dropSetNullKey: true,
  releaseForeignKey: false,
  swapPrimaryKey: false,
  releaseTenant: true,
  addIndex: false,
  dropIndex: false,
  addForeignKey: false,
  contractColumn: true,
  dropColumn: true,
  dropTable: true,
};

type Describe<K extends ChangeKind> = (change: ChangeOf<K>) => string | null;

export const where = (c: { model: string; field: Field }) => `${c.model}.${c.field.name}`;

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

function moved(c: Moved): string {
  if (c.reason === 'rename') return `rename ${c.model}.${c.from.name} to ${where(c)}`;
  return `change type of ${where(c)} from ${describeType(c.from.type)} to ${describeType(c.field.type)}`;
}

const SUMMARY: { [K in ChangeKind]: Describe<K> } = {
  createTable: (c) => `add model ${c.model.name}`,
  dropTable: (c) => `drop model ${c.model.name}`,
  addColumn: (c) => `add field ${where(c)} (${fieldFacts(c.field)})`,
  dropColumn: (c) => `drop field ${where(c)}`,
  releaseColumn: (c) => `let ${where(c)} be null until the contract drops it`,
  alterType: (c) => `change type of ${where(c)} from ${describeType(c.from.type)} to ${describeType(c.field.type)}`,
  expandColumn: (c) => `${moved(c)} (expand: new column "${c.field.column}" kept in step with "${c.from.column}")`,
  contractColumn: (c) => `drop the old column of ${where(c)} ("${c.from.column}", now "${c.field.column}")`,
  replaceCheck: (c) => `change values of ${where(c)}: ${valueChanges(c.from, c.field)}`,
  setRequired: (c) => `make ${where(c)} required`,
  dropRequired: (c) => `make ${where(c)} optional`,
  setDefault: (c) => (c.field.default === undefined ? `drop default of ${where(c)}` : `set default of ${where(c)} to ${sqlLiteral(c.field.default)}`),
  addIndex: (c) => (c.reason === 'tag' ? `add ${c.index.what}` : null),
  dropIndex: (c) => (c.reason === 'tag' ? `drop ${c.index.what}` : null),
  relayout: (c) => `convert ${c.model} to layout 3 (tenant_id not null, primary key (tenant_id, id)${c.from === 1 ? ', indexes led by tenant_id' : ''})`,
  tenantNotNull: () => null,
  keyIndex: () => null,
  swapForeignKey: () => null,
  relaxForeignKey: (c) => `key ${where(c)} on delete ${c.field.required ? 'restrict' : 'no action (the service clears it before a hard delete; Citus refuses set null)'}`,
  dropSetNullKey: (c) => `drop the on delete set null key of ${where(c)}`,
  releaseForeignKey: () => null,
  swapPrimaryKey: () => null,
  releaseTenant: (c) => `drop the tenant_id trigger of ${c.model} (it fills null for instances of builds before layout 3)`,
  addForeignKey: () => null,
};

export function summarize(change: Change): string | null {
  return (SUMMARY[change.kind] as Describe<ChangeKind>)(change);
}

const requiredReason = (c: OnField) => `making ${where(c)} required fails while rows hold no value${c.field.default === undefined ? '' : ' (nulls are first set to the default)'}`;

const DESTRUCTIVE: { [K in ChangeKind]: (change: ChangeOf<K>) => string | null } = {
  createTable: () => null,
  dropTable: (c) => `dropping model ${c.model.name} deletes table "${c.model.table}" and all its rows`,
  addColumn: () => null,
  dropColumn: (c) => `dropping ${where(c)} deletes the column "${c.field.column}" and its data`,
  releaseColumn: () => null,
  alterType: (c) => (widensToText(c.from, c.field) ? null : `changing the type of ${where(c)} fails when existing values do not fit`),
  expandColumn: (c) => (!c.from.required && c.field.required ? requiredReason(c) : null),
  contractColumn: (c) => (c.reason === 'rename' || lossless(c.from, c.field) ? null : `changing the type of ${where(c)} converts existing values and fails or loses data when they do not fit`),
  replaceCheck: (c) => (valueChanges(c.from, c.field).includes('remove') ? `removing values of ${where(c)} fails while rows still hold them` : null),
  setRequired: requiredReason,
  dropRequired: () => null,
  setDefault: () => null,
  addIndex: () => null,
  dropIndex: () => null,
  relayout: () => null,
  tenantNotNull: () => null,
  keyIndex: () => null,
  swapForeignKey: () => null,
  relaxForeignKey: () => null,
  dropSetNullKey: () => null,
  releaseForeignKey: () => null,
  swapPrimaryKey: () => null,
  releaseTenant: () => null,
  addForeignKey: () => null,
};

/** An enum becoming a plain string keeps every value: only its CHECK goes. */
function widensToText(from: Field, to: Field): boolean {
  return from.type.kind === 'enum' && to.type.kind === 'scalar' && to.type.scalar === 'string';
}

/** Conversions that keep every value: anything to text, boolean to number. */
function lossless(from: Field, to: Field): boolean {
  const [a, b] = [sqlType(from.type), sqlType(to.type)];
  return b === 'text' || (a === 'boolean' && b === 'double precision');
}

/** Why a change can lose data or fail on existing rows; null when it is safe. */
export function destructiveReason(change: Change): string | null {
  return (DESTRUCTIVE[change.kind] as (c: Change) => string | null)(change);
}
