/**
 * The lock report of `svc-gen migrate --plan DIR`: each pending step with the
 * lock it takes, whether it rewrites or scans the table, whether it runs
 * online, and the rows it touches (pg_class.reltuples). Reads only.
 */
import type { Db } from '../types.ts';
import { blocks, classifyStatement, combine, type StatementClass, type TableFacts } from './classify.ts';
import { splitStatements, type Step } from './parse.ts';
import { appliedChecksums, type MigrationFile } from './store.ts';
import { parseFile, readSet, type MigrationSet } from './files.ts';
import { contractHolders, describeHolders } from './gate.ts';

export interface PlannedStep {
  readonly file: string;
  readonly step: number;
  readonly kind: Step['kind'];
  readonly description: string;
  readonly lock: StatementClass;
  /** The step runs outside a transaction (online) or in batches (backfill): it never holds a lock for long. */
  readonly online: boolean;
  /** Estimated rows of the table it locks (reltuples), null when never analyzed or none. */
  readonly rows: number | null;
  /** Set on a contract file live older instances hold back. */
  readonly heldBack: string | null;
}

interface Snapshot {
  readonly rows: Map<string, number>;
  readonly types: Map<string, string>;
  readonly notNullChecks: Set<string>;
  readonly indexes: Map<string, string>;
}

async function snapshot(db: Db): Promise<Snapshot> {
  const [tables, columns, checks, indexes] = await Promise.all([
    db.manyOrNone<{ name: string; rows: number }>(`
      select c.relname as name, c.reltuples::float8 as rows from pg_class c
       where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p')`),
    db.manyOrNone<{ key: string; type: string }>(`
      select c.relname || '.' || a.attname as key, format_type(a.atttypid, a.atttypmod) as type
        from pg_attribute a join pg_class c on c.oid = a.attrelid
       where c.relnamespace = current_schema()::regnamespace and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped`),
    db.manyOrNone<{ relname: string; def: string }>(`
      select c.relname, pg_get_constraintdef(k.oid) as def from pg_constraint k join pg_class c on c.oid = k.conrelid
       where k.contype = 'c' and k.convalidated and c.relnamespace = current_schema()::regnamespace`),
    db.manyOrNone<{ index: string; table: string }>(`
      select i.relname as index, c.relname as table from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class c on c.oid = x.indrelid
       where c.relnamespace = current_schema()::regnamespace`),
  ]);
  const notNullChecks = new Set<string>();
  for (const check of checks) {
    const m = /^CHECK \(\("?([^"\s)]+)"? IS NOT NULL\)\)$/.exec(check.def);
    if (m) notNullChecks.add(`${check.relname}.${m[1]}`);
  }
  return {
    rows: new Map(tables.map((t) => [t.name, t.rows])),
    types: new Map(columns.map((c) => [c.key, c.type])),
    notNullChecks,
    indexes: new Map(indexes.map((i) => [i.index, i.table])),
  };
}

/** Facts of the database as the plan goes: tables and not-null checks created by earlier steps count. */
function factsOf(snap: Snapshot): TableFacts & { learn(statement: string, c: StatementClass): void } {
  const created = new Set<string>();
  const addedChecks = new Map<string, string>();
  return {
    isNew: (table) => created.has(table),
    hasNotNullCheck: (table, column) => snap.notNullChecks.has(`${table}.${column}`),
    columnType: (table, column) => snap.types.get(`${table}.${column}`) ?? null,
    tableOfIndex: (index) => snap.indexes.get(index) ?? null,
    learn(statement, c) {
      if (c.table === null) return;
      if (/^create (?:unlogged )?table/i.test(statement)) created.add(c.table);
      const check = /add constraint ("?[\w$]+"?) check \(\s*\(?\s*"?(\w+)"? is not null\s*\)?\s*\)/i.exec(statement);
      if (check) addedChecks.set(check[1].replace(/"/g, ''), `${c.table}.${check[2]}`);
      const validate = /validate constraint ("?[\w$]+"?)/i.exec(statement);
      const validated = validate ? addedChecks.get(validate[1].replace(/"/g, '')) : undefined;
      if (validated) snap.notNullChecks.add(validated);
    },
  };
}

export async function planMigrations(db: Db, sets: readonly MigrationSet[]): Promise<PlannedStep[]> {
  const files = sets.flatMap(readSet);
  const applied = await appliedChecksums(db);
  const pending = files.filter((file) => !applied.has(`${file.scope}/${file.name}`));
  const snap = await snapshot(db);
  const facts = factsOf(snap);
  const planned: PlannedStep[] = [];
  let heldBack: string | null = null;
  for (const file of pending) {
    const parsed = parseFile(file);
    if (parsed.contractOf !== null && heldBack === null) {
      const holders = await contractHolders(db, file);
      if (holders.length > 0) heldBack = describeHolders(file, holders);
    }
    for (const step of parsed.steps) planned.push(planStep(file, step, facts, snap, heldBack));
  }
  return planned;
}

function planStep(file: MigrationFile, step: Step, facts: ReturnType<typeof factsOf>, snap: Snapshot, heldBack: string | null): PlannedStep {
  const classes = splitStatements(step.body).map((statement) => {
    const c = classifyStatement(statement.replace(/\s+/g, ' '), facts);
    facts.learn(statement.replace(/\s+/g, ' '), c);
    return c;
  });
  const lock = combine(classes);
  const estimate = lock.table === null || lock.newTable ? null : snap.rows.get(lock.table) ?? null;
  return {
    file: `${file.scope}/${file.name}`, step: step.number, kind: step.kind, description: step.description, lock,
    online: step.kind !== 'transactional', rows: estimate === null ? null : Math.max(estimate, -1), heldBack,
  };
}

const count = (n: number) => Math.round(n).toLocaleString('en-US');

function rowsText(p: PlannedStep): string {
  if (p.lock.newTable || p.lock.table === null) return '0 (new or no table)';
  if (p.rows === null || p.rows < 0) return 'unknown (table never analyzed)';
  const touched = p.lock.scans || p.lock.rewrites || p.lock.rowLocks;
  return touched ? `~${count(p.rows)}` : `0 of ~${count(p.rows)} (catalog only)`;
}

function lockText(p: PlannedStep): string {
  const l = p.lock;
  if (!l.known) return `unclassified statement: review by hand (assume ${l.lock} for its whole run)`;
  if (l.newTable || l.lock === 'none') return 'none that traffic waits on (new table or catalog only)';
  const span = l.brief ? 'brief, catalog only' : l.rowLocks ? (p.kind === 'backfill' ? 'row locks per batch' : 'row locks on every updated row until commit') : 'for the whole statement';
  return `${l.lock} on ${l.table ?? '?'} (${span}; blocks ${blocks(l.lock)}${l.brief ? ' for milliseconds' : ''})`;
}

/** The report, one block per pending step. */
export function formatPlan(planned: readonly PlannedStep[]): string {
  if (planned.length === 0) return 'no pending migrations\n';
  const lines: string[] = [];
  let held: string | null = null;
  for (const p of planned) {
    if (p.heldBack !== null && held === null) {
      held = p.heldBack;
      lines.push(`held back: ${held}`);
    }
    lines.push(`${p.file} step ${p.step} ${p.kind}: ${p.description}`);
    lines.push(`  lock: ${lockText(p)}`);
    lines.push(`  rewrites table: ${p.lock.rewrites ? 'yes' : 'no'}; scans table: ${p.lock.scans ? 'yes' : 'no'}; online: ${p.online ? 'yes' : 'no'}; rows: ${rowsText(p)}`);
  }
  return `${lines.join('\n')}\n`;
}
