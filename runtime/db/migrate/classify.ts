/**
 * What a migration statement does to a live table: the lock it takes, whether
 * it rewrites or scans the table while holding it. One classifier for
 * `svc-gen migrate --plan` and the docs (docs/migrations.md takes its table
 * from these rules). Pure: facts about the database come from `TableFacts`.
 */
import { splitStatements } from './parse.ts';

/** Postgres' table lock modes, weakest first (the order is their strength). */
export const LOCK_MODES = [
  'none', 'ACCESS SHARE', 'ROW SHARE', 'ROW EXCLUSIVE', 'SHARE UPDATE EXCLUSIVE',
  'SHARE', 'SHARE ROW EXCLUSIVE', 'EXCLUSIVE', 'ACCESS EXCLUSIVE',
] as const;
export type LockMode = (typeof LOCK_MODES)[number];

export interface StatementClass {
  /** The table the lock is on (unquoted), null when none or unknown. */
  readonly table: string | null;
  readonly lock: LockMode;
  /** Held only for a catalog change (milliseconds), not for a scan or rewrite. */
  readonly brief: boolean;
  readonly rewrites: boolean;
  /** Reads the whole table while holding the lock. */
  readonly scans: boolean;
  /** The table is created earlier in the same plan: nothing waits on it. */
  readonly newTable: boolean;
  /** Locks rows (an update): per batch in a backfill, all at once in a transaction. */
  readonly rowLocks: boolean;
  /** False when the statement is not one the classifier knows: review it by hand. */
  readonly known: boolean;
}

/** What the database says, for the cases the statement text cannot decide. */
export interface TableFacts {
  /** Created by an earlier statement of the plan. */
  isNew(table: string): boolean;
  /** A validated `check (column is not null)` exists (or is validated earlier in the plan). */
  hasNotNullCheck(table: string, column: string): boolean;
  /** The column's type as `format_type` writes it, null when unknown. */
  columnType(table: string, column: string): string | null;
  /** The table an index belongs to. */
  tableOfIndex(index: string): string | null;
}

const ID = String.raw`(?:"(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)`;
const QID = `${ID}(?:\\.${ID})?`;

/** `"a"."b"` or a.b -> b (the runtime works in one schema). */
export function unquote(name: string): string {
  const parts = name.match(new RegExp(ID, 'gi')) ?? [name];
  const last = parts[parts.length - 1];
  return last.startsWith('"') ? last.slice(1, -1).replace(/""/g, '"') : last.toLowerCase();
}

const base = { table: null, lock: 'none', brief: true, rewrites: false, scans: false, newTable: false, rowLocks: false, known: true } as const;

type Rule = readonly [RegExp, (m: RegExpExecArray, facts: TableFacts, text: string) => StatementClass];

const on = (table: string, facts: TableFacts, lock: LockMode, more: Partial<StatementClass> = {}): StatementClass => {
  const name = unquote(table);
  const isNew = facts.isNew(name);
  return { ...base, table: name, lock, ...more, ...(isNew ? { newTable: true, scans: false, rewrites: false, brief: true } : {}) };
};

const RULES: readonly Rule[] = [
  [new RegExp(`^create (?:unique )?index concurrently (?:if not exists )?(?:${ID} )?on (?:only )?(${QID})`, 'i'),
    (m, f) => on(m[1], f, 'SHARE UPDATE EXCLUSIVE', { brief: false, scans: true })],
  [new RegExp(`^create (?:unique )?index (?:if not exists )?(?:${ID} )?on (?:only )?(${QID})`, 'i'),
    (m, f) => on(m[1], f, 'SHARE', { brief: false, scans: true })],
  [new RegExp(`^drop index concurrently (?:if exists )?(${QID})`, 'i'),
    (m, f) => on(f.tableOfIndex(unquote(m[1])) ?? '', f, 'SHARE UPDATE EXCLUSIVE')],
  [new RegExp(`^drop index (?:if exists )?(${QID})`, 'i'), (m, f) => on(f.tableOfIndex(unquote(m[1])) ?? '', f, 'ACCESS EXCLUSIVE')],
  [new RegExp(`^create (?:unlogged )?table (?:if not exists )?(${QID})`, 'i'), (m) => ({ ...base, table: unquote(m[1]), newTable: true })],
  [new RegExp(`^drop table (?:if exists )?(${QID})`, 'i'), (m, f) => on(m[1], f, 'ACCESS EXCLUSIVE')],
  [new RegExp(`^alter table (?:if exists )?(?:only )?(${QID}) ([\\s\\S]+)$`, 'i'), (m, f) => alterTable(unquote(m[1]), m[2], f)],
  [new RegExp(`^update (?:only )?(${QID})`, 'i'), (m, f) => on(m[1], f, 'ROW EXCLUSIVE', { brief: false, rowLocks: true })],
  [new RegExp(`^delete from (?:only )?(${QID})`, 'i'), (m, f) => on(m[1], f, 'ROW EXCLUSIVE', { brief: false, rowLocks: true })],
  [new RegExp(`^insert into (${QID})`, 'i'), (m, f) => on(m[1], f, 'ROW EXCLUSIVE')],
  [new RegExp(`^create (?:or replace )?(?:constraint )?trigger [\\s\\S]* on (${QID})`, 'i'), (m, f) => on(m[1], f, 'SHARE ROW EXCLUSIVE')],
  [new RegExp(`^drop trigger (?:if exists )?${ID} on (${QID})`, 'i'), (m, f) => on(m[1], f, 'ACCESS EXCLUSIVE')],
  [new RegExp(`^vacuum\\b[^"a-z]*(?:\\([^)]*\\) )?(${QID})?`, 'i'), (m, f) => on(m[1] ?? '', f, 'SHARE UPDATE EXCLUSIVE', { brief: false, scans: true })],
  [/^(?:select|with)\b/i, (_m, _f, text) => ({ ...base, table: firstTable(text), lock: 'ACCESS SHARE', brief: false, scans: true })],
  [/^(?:create|drop|alter) (?:or replace )?(?:function|procedure|type|sequence|view|extension|schema|domain|role)\b/i, () => base],
  [/^(?:comment on|grant|revoke|set|reset|select set_config)\b/i, () => base],
];

const firstTable = (text: string) => {
  const m = new RegExp(`\\bfrom (?:only )?(${QID})`, 'i').exec(text);
  return m ? unquote(m[1]) : null;
};

export function classifyStatement(statement: string, facts: TableFacts): StatementClass {
  const text = statement.replace(/\s+/g, ' ').trim();
  for (const [pattern, rule] of RULES) {
    const m = pattern.exec(text);
    if (m) return rule(m, facts, text);
  }
  return { ...base, lock: 'ACCESS EXCLUSIVE', brief: false, known: false };
}

/** The strongest of several classes (a transactional step's statements hold their locks together). */
export function combine(classes: readonly StatementClass[]): StatementClass {
  if (classes.length === 0) return base;
  const strongest = classes.reduce((a, b) => (LOCK_MODES.indexOf(b.lock) > LOCK_MODES.indexOf(a.lock) ? b : a));
  return {
    ...strongest,
    brief: classes.every((c) => c.brief),
    rewrites: classes.some((c) => c.rewrites),
    scans: classes.some((c) => c.scans),
    rowLocks: classes.some((c) => c.rowLocks),
    newTable: classes.every((c) => c.newTable),
    known: classes.every((c) => c.known),
  };
}

export function classifyStep(body: string, facts: TableFacts): StatementClass[] {
  return splitStatements(body).map((statement) => classifyStatement(statement, facts));
}

/** The actions of `alter table t <actions>`, separated by top-level commas. */
function actions(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of text) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) { out.push(current.trim()); current = ''; } else current += c;
  }
  out.push(current.trim());
  return out.filter(Boolean);
}

const VOLATILE = /\b(?:gen_random_uuid|uuid_generate_v[14]|random|clock_timestamp|timeofday|nextval|txid_current|pg_current_xact_id)\s*\(|\b(?:small|big)?serial\b|\bgenerated\b/i;

function alterTable(table: string, rest: string, facts: TableFacts): StatementClass {
  const classes = actions(rest).map((action) => alterAction(table, action, facts));
  return combine(classes.map((c) => (facts.isNew(table) ? { ...c, newTable: true, scans: false, rewrites: false, brief: true } : c)));
}

function alterAction(table: string, action: string, facts: TableFacts): StatementClass {
  const at = (lock: LockMode, more: Partial<StatementClass> = {}): StatementClass => ({ ...base, table, lock, ...more });
  const column = new RegExp(`^alter (?:column )?(${ID}) (.+)$`, 'i').exec(action);
  if (/^add (?:column )?(?!constraint\b|check\b|foreign\b|unique\b|primary\b|exclude\b)/i.test(action)) {
    return VOLATILE.test(action) ? at('ACCESS EXCLUSIVE', { brief: false, rewrites: true }) : at('ACCESS EXCLUSIVE');
  }
  if (/^add\b/i.test(action)) return addConstraint(action, at);
  if (/^validate constraint\b/i.test(action)) return at('SHARE UPDATE EXCLUSIVE', { brief: false, scans: true });
  if (/^drop (?:constraint|column)\b/i.test(action) || /^rename\b/i.test(action)) return at('ACCESS EXCLUSIVE');
  if (/^(?:set|reset) \(/i.test(action) || /^alter (?:column )?\S+ set statistics/i.test(action)) return at('SHARE UPDATE EXCLUSIVE');
  if (/^(?:enable|disable) trigger\b/i.test(action)) return at('SHARE ROW EXCLUSIVE');
  if (column) return alterColumn(table, unquote(column[1]), column[2], facts, at);
  return at('ACCESS EXCLUSIVE', { brief: false, known: false });
}

function addConstraint(action: string, at: (lock: LockMode, more?: Partial<StatementClass>) => StatementClass): StatementClass {
  const notValid = /\bnot valid\s*$/i.test(action);
  if (/\bforeign key\b/i.test(action)) return at('SHARE ROW EXCLUSIVE', notValid ? {} : { brief: false, scans: true });
  if (/\bcheck\s*\(/i.test(action)) return at('ACCESS EXCLUSIVE', notValid ? {} : { brief: false, scans: true });
  if (/\busing index\b/i.test(action)) return at('ACCESS EXCLUSIVE');
  if (/\b(?:unique|primary key|exclude)\b/i.test(action)) return at('ACCESS EXCLUSIVE', { brief: false, scans: true });
  return at('ACCESS EXCLUSIVE', { brief: false, known: false });
}

function alterColumn(
  table: string, column: string, change: string, facts: TableFacts,
  at: (lock: LockMode, more?: Partial<StatementClass>) => StatementClass,
): StatementClass {
  if (/^set not null$/i.test(change)) {
    return facts.hasNotNullCheck(table, column) ? at('ACCESS EXCLUSIVE') : at('ACCESS EXCLUSIVE', { brief: false, scans: true });
  }
  if (/^(?:drop not null|set default\b|drop default)/i.test(change)) return at('ACCESS EXCLUSIVE');
  const type = /^(?:set data )?type (.+?)(?: collate \S+)?( using .+)?$/i.exec(change);
  if (type) {
    const compatible = !type[2] && binaryCompatible(facts.columnType(table, column), type[1]);
    return compatible ? at('ACCESS EXCLUSIVE') : at('ACCESS EXCLUSIVE', { brief: false, rewrites: true });
  }
  return at('ACCESS EXCLUSIVE', { brief: false, known: false });
}

const ALIASES: Record<string, string> = { varchar: 'character varying', int: 'integer', int4: 'integer', int8: 'bigint', bool: 'boolean', decimal: 'numeric' };

function normalType(type: string): { name: string; args: number[] } {
  const m = /^\s*([a-z ]+?)\s*(?:\(([\d\s,]+)\))?\s*$/i.exec(type.replace(/"/g, ''));
  if (!m) return { name: type.trim().toLowerCase(), args: [] };
  const name = m[1].toLowerCase();
  return { name: ALIASES[name] ?? name, args: m[2] ? m[2].split(',').map(Number) : [] };
}

/** A type change Postgres makes without rewriting: a longer or dropped varchar limit, a wider numeric of the same scale, the same type. */
export function binaryCompatible(from: string | null, to: string): boolean {
  if (from === null) return false;
  const a = normalType(from);
  const b = normalType(to);
  if (a.name === b.name && a.args.join() === b.args.join()) return true;
  const texty = (t: { name: string }) => t.name === 'character varying' || t.name === 'text';
  if (texty(a) && texty(b)) return b.args.length === 0 || (a.name === 'character varying' && a.args.length === 1 && b.args[0] >= a.args[0]);
  if (a.name === 'numeric' && b.name === 'numeric') {
    return b.args.length === 0 || (a.args.length === 2 && b.args.length === 2 && b.args[1] === a.args[1] && b.args[0] >= a.args[0]);
  }
  return false;
}

/** Who waits while a lock of `mode` is held on a table. */
export function blocks(mode: LockMode): 'reads and writes' | 'writes' | 'no reads or writes' {
  if (mode === 'ACCESS EXCLUSIVE') return 'reads and writes';
  if (mode === 'SHARE' || mode === 'SHARE ROW EXCLUSIVE' || mode === 'EXCLUSIVE') return 'writes';
  return 'no reads or writes';
}
