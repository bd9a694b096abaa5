/**
 * A test-only executor of the migration step format (/docs/migrations.md):
 * enough of the runner to prove that generated steps are valid SQL that runs
 * in the mode each step is written for. Transactional steps run in one
 * transaction with a lock_timeout; online steps alone, outside a transaction
 * (Postgres refuses `concurrently` inside one); a backfill in keyset batches
 * on `id`, then `vacuum (analyze)`; a preflight fails when it returns rows.
 */
import type pg from 'pg';

export type StepKind = 'transactional' | 'online' | 'backfill' | 'preflight';

export interface ParsedStep {
  readonly number: number;
  readonly kind: StepKind;
  readonly table: string | null;
  readonly description: string;
  readonly body: string;
}

const STEP_LINE = /^-- step (\d+) (transactional|online|backfill|preflight)(?: "([a-z0-9_]+)")?: (.+)$/;

/** The steps of a migration file; a file without step lines is one transactional step. */
export function parseSteps(text: string): ParsedStep[] {
  const steps: { number: number; kind: StepKind; table: string | null; description: string; lines: string[] }[] = [];
  for (const line of text.split('\n')) {
    const match = STEP_LINE.exec(line);
    if (match) steps.push({ number: Number(match[1]), kind: match[2] as StepKind, table: match[3] ?? null, description: match[4], lines: [] });
    else steps.at(-1)?.lines.push(line);
  }
  if (steps.length === 0) return [{ number: 1, kind: 'transactional', table: null, description: 'whole file', body: text }];
  return steps.map(({ lines, ...step }) => ({ ...step, body: lines.join('\n').trim() }));
}

/** The file's `-- contract of NNNN: ...` marker, if any. */
export function contractOf(text: string): string | null {
  return /^-- contract of (\d{4}): /m.exec(text)?.[1] ?? null;
}

export class PreflightError extends Error {}

export interface ApplyOptions {
  /** Rows per backfill batch (the runner's SVC_MIGRATE_BATCH_ROWS). */
  readonly batchRows?: number;
  /** Called before each step, e.g. to interleave application writes. */
  readonly before?: (step: ParsedStep) => Promise<void>;
}

export async function applyMigration(client: pg.Client, text: string, options: ApplyOptions = {}): Promise<void> {
  const steps = parseSteps(text);
  steps.forEach((step, i) => {
    if (step.number !== i + 1) throw new Error(`step ${step.number} out of order`);
  });
  for (const step of steps) {
    await options.before?.(step);
    await RUN[step.kind](client, step, options.batchRows ?? 10_000);
  }
}

type Run = (client: pg.Client, step: ParsedStep, batchRows: number) => Promise<void>;

const RUN: Record<StepKind, Run> = {
  transactional: async (client, step) => {
    await client.query('begin');
    try {
      await client.query(`set local lock_timeout = '5s'`);
      await client.query(step.body);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback');
      throw error;
    }
  },
  online: async (client, step) => {
    singleStatement(step);
    await client.query(`set lock_timeout = '5s'`);
    try {
      await client.query(step.body);
    } finally {
      await client.query('reset lock_timeout');
    }
  },
  backfill: async (client, step, batchRows) => {
    const match = /^update ("[a-z0-9_]+") (set .+) where (.+);$/s.exec(singleStatement(step));
    if (!match || match[1] !== `"${step.table}"`) throw new Error(`backfill step ${step.number} is not one update of "${step.table}": ${step.body}`);
    const [, table, set, condition] = match;
    let from = '';
    for (;;) {
      const bound = await client.query<{ to: string | null }>(`select max("id") as "to" from (select "id" from ${table} where "id" > $1 order by "id" limit ${batchRows}) b`, [from]);
      const to = bound.rows[0].to;
      if (to === null) break;
      await client.query('begin');
      await client.query(`update ${table} ${set} where (${condition}) and "id" > $1 and "id" <= $2`, [from, to]);
      await client.query('commit');
      from = to;
    }
    await client.query(`vacuum (analyze) ${table}`);
  },
  preflight: async (client, step) => {
    const result = await client.query(singleStatement(step));
    if (result.rows.length > 0) throw new PreflightError(`step ${step.number} (${step.description}) found ${JSON.stringify(result.rows.slice(0, 10))}`);
  },
};

/** Online, backfill and preflight bodies hold exactly one statement. */
function singleStatement(step: ParsedStep): string {
  const statements = step.body.split(/;\s*(?:\n|$)/).filter((s) => s.trim() !== '');
  if (statements.length !== 1 || step.body.startsWith('--')) throw new Error(`step ${step.number} ${step.kind} must hold one statement: ${step.body}`);
  return step.body;
}
