/**
 * The step format of migration files, as agreed with the runner: a step line
 * `-- step N <kind>[ "table"]: <description>` followed by its SQL. A file with
 * no step line (the initial migration) is one transactional step.
 */

export type StepKind = 'transactional' | 'online' | 'backfill' | 'preflight';

export interface Step {
  readonly kind: StepKind;
  /** Required for `backfill` (the runner batches on its `id`). */
  readonly table?: string;
  /** One line naming the change: `validate Contact.email is not null`. */
  readonly description: string;
  /**
   * Statements, each ending with `;`. `online`, `backfill` and `preflight`
   * steps hold exactly one (the runner runs them alone, outside a transaction).
   */
  readonly sql: readonly string[];
}

export const transactional = (description: string, ...sql: string[]): Step => ({ kind: 'transactional', description, sql });
export const online = (description: string, statement: string): Step => ({ kind: 'online', description, sql: [statement] });
export const preflight = (description: string, select: string): Step => ({ kind: 'preflight', description, sql: [select] });
/** `update "table" set ... where <condition>;`: the runner appends its keyset range to the condition. */
export const backfill = (table: string, description: string, update: string): Step => ({ kind: 'backfill', table, description, sql: [update] });

const SINGLE: ReadonlySet<StepKind> = new Set(['online', 'backfill', 'preflight']);

/** The step line; throws on a step the runner could not run as written (a generator bug). */
export function stepLine(step: Step, number: number): string {
  if (SINGLE.has(step.kind) && step.sql.length !== 1) throw new Error(`svc-gen bug: ${step.kind} step "${step.description}" must hold one statement`);
  if (step.kind === 'backfill' && !step.table) throw new Error(`svc-gen bug: backfill step "${step.description}" names no table`);
  if (/[\r\n]/.test(step.description)) throw new Error(`svc-gen bug: step description spans lines: ${step.description}`);
  const table = step.table ? ` "${step.table}"` : '';
  return `-- step ${number} ${step.kind}${table}: ${step.description}`;
}
