/**
 * SVC_DISTRIBUTED_CHECK (docs/adr/025-distributable-layout.md): proof on plain
 * Postgres that every statement the runtime sends would be single-shard on
 * Citus, as pg-boss runs its suite with DISTRIBUTED=true.
 *
 * - `1` (the test suite's mode): a statement that reads or writes a
 *   distributed table without pinning one tenant, names two tenants, or
 *   whose transaction already touched another tenant is refused before it
 *   is sent (the error names the statement and its call site), unless it
 *   belongs to a class ADR 025 lists as waiting for the layout or the feed
 *   cursor (waivers.ts).
 * - `report`: nothing is refused; every violation, waived or not, is
 *   appended as a JSON line to SVC_DISTRIBUTED_CHECK_REPORT (a path).
 *
 * The check is process-wide (the variable is), installed on the driver by
 * runtime/db: pg-promise's `query` event and the hot path's direct pool.
 */
import { appendFileSync } from 'node:fs';
import type { ITaskContext } from 'pg-promise';
import { analyzeStatement, SOME_TENANT, type Problem, type Tenant } from './analyze.ts';
import { waiverOf } from './waivers.ts';
import { compileSites } from '../../sql/index.ts';

export interface Violation extends Problem {
  readonly statement: string;
  /** The first frames of the runtime's own code that sent it. */
  readonly site: string;
  /** Why it is allowed for now (ADR 025), or null. */
  readonly waived: string | null;
}

type Parse = (text: string) => { stmts?: Array<{ stmt?: unknown }> };

export type CheckMode = 'throw' | 'report';

/** The variable's mode; a value other than unset, `0`, `1` or `report` stops the start with one line naming it. */
export function checkModeFromEnv(env: NodeJS.ProcessEnv = process.env): CheckMode | null {
  const raw = env.SVC_DISTRIBUTED_CHECK?.trim() ?? '';
  if (raw === '' || raw === '0') return null;
  if (raw === '1') return 'throw';
  if (raw === 'report') {
    if (!env.SVC_DISTRIBUTED_CHECK_REPORT) throw new Error('SVC_DISTRIBUTED_CHECK=report needs SVC_DISTRIBUTED_CHECK_REPORT, the file the violations are appended to');
    return 'report';
  }
  throw new Error(`SVC_DISTRIBUTED_CHECK must be 1, report or 0 (got ${JSON.stringify(raw)})`);
}

const PARSED_KEPT = 4_000;
/** A long-running process keeps the newest this many in memory; the report file has every class. */
const VIOLATIONS_KEPT = 10_000;
const FOREIGN = 'not built by runtime/sql: a test\'s or an operator hook\'s own statement';

export class DistributedCheck {
  readonly violations: Violation[] = [];
  private readonly parsed = new Map<string, Array<{ stmt?: unknown }> | null>();
  private readonly transactions = new WeakMap<object, Set<Tenant>>();
  private readonly reported = new Set<string>();
  private readonly siteOf = compileSites();

  constructor(
    readonly mode: CheckMode,
    private readonly parse: Parse,
    private readonly reportPath: string | null = null,
  ) {}

  /**
   * Checks one statement before it is sent: `query` as pg-promise or pg get it
   * (text, or `{text, values}`), `ctx` the task or transaction it runs in.
   * Throws in mode `throw` for a violation that no waiver covers.
   */
  statement(query: unknown, ctx: ITaskContext | null | undefined): void {
    const { text, values } = statementOf(query);
    if (text === null) return;
    const stmts = this.stmts(text);
    if (!stmts) return;
    const transaction = transactionOf(ctx);
    for (const { stmt } of stmts) {
      if (!stmt) continue;
      const analysis = analyzeStatement(stmt, values);
      const problems = [...analysis.problems];
      if (transaction) {
        let seen = this.transactions.get(transaction);
        if (!seen) this.transactions.set(transaction, (seen = new Set()));
        for (const t of analysis.tenants) if (t !== SOME_TENANT) seen.add(t);
        if (seen.size > 1 && analysis.tenants.size > 0) {
          problems.push({ kind: 'two-tenants', table: analysis.tables.join(', '), message: `the transaction touches ${seen.size} tenants` });
        }
      }
      for (const problem of problems) this.violation(problem, text);
    }
  }

  private stmts(text: string): Array<{ stmt?: unknown }> | null {
    let stmts = this.parsed.get(text);
    if (stmts === undefined) {
      try {
        stmts = this.parse(text).stmts ?? [];
      } catch {
        stmts = null; // Postgres refuses it too, with its own error
      }
      if (this.parsed.size >= PARSED_KEPT) this.parsed.clear();
      this.parsed.set(text, stmts);
    }
    return stmts;
  }

  private violation(problem: Problem, text: string): void {
    const site = this.siteOf(text);
    // The runtime builds every statement with runtime/sql (ADR 016); one it did not build is
    // a test's own look at the tables or an operator hook's statement: reported, not refused.
    const waived = site === undefined ? FOREIGN : waiverOf(problem, text);
    const violation: Violation = { ...problem, statement: oneLine(text), site: site ?? callSite(), waived };
    if (this.violations.length >= VIOLATIONS_KEPT) this.violations.splice(0, this.violations.length - VIOLATIONS_KEPT + 1);
    this.violations.push(violation);
    if (this.reportPath) {
      const key = `${problem.kind}|${problem.table}|${violation.site}`;
      if (!this.reported.has(key)) {
        this.reported.add(key);
        appendFileSync(this.reportPath, `${JSON.stringify(violation)}\n`);
      }
    }
    if (this.mode === 'throw' && waived === null) {
      throw new Error(`distributed check: ${problem.message}\n  statement: ${violation.statement}\n  built at: ${violation.site}`);
    }
  }
}

/** The text and bound values of what pg-promise or pg is handed. */
function statementOf(query: unknown): { text: string | null; values: readonly unknown[] | undefined } {
  if (typeof query === 'string') return { text: query, values: undefined };
  if (typeof query === 'object' && query !== null && typeof (query as { text?: unknown }).text === 'string') {
    const q = query as { text: string; values?: unknown[] };
    return { text: q.text, values: q.values };
  }
  return { text: null, values: undefined };
}

/** The outermost transaction `ctx` runs in (a savepoint belongs to its transaction), or null outside one. */
function transactionOf(ctx: ITaskContext | null | undefined): object | null {
  let tx: ITaskContext | null = null;
  for (let c = ctx ?? null; c; c = c.parent) if (c.isTX) tx = c;
  return tx;
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 400 ? `${flat.slice(0, 400)}...` : flat;
}

const OWN_FRAME = /\/(runtime|test|worker|bench)\/(?!db\/distributed\/|db\/index\.ts)/;

/** The first frames of our code on the stack (pg-promise's own frames skipped). */
function callSite(): string {
  const frames = (new Error().stack ?? '').split('\n').slice(1).map((l) => l.trim());
  const ours = frames.filter((f) => OWN_FRAME.test(f) && !f.includes('node_modules'));
  return (ours.length > 0 ? ours.slice(0, 3) : frames.slice(0, 2)).join(' < ');
}

let active: DistributedCheck | null = null;

/** The process's check, created on first use when SVC_DISTRIBUTED_CHECK asks for one (the parser loads once). */
export async function distributedCheck(): Promise<DistributedCheck | null> {
  if (active) return active;
  const mode = checkModeFromEnv();
  if (mode === null) return null;
  const parser = await import('libpg-query');
  await parser.loadModule();
  active ??= new DistributedCheck(mode, parser.parseSync, process.env.SVC_DISTRIBUTED_CHECK_REPORT || null);
  return active;
}

/** The process's check if one is installed (for the statements that bypass pg-promise). */
export function installedCheck(): DistributedCheck | null {
  return active;
}
