/**
 * The migration runner: ordered SQL files, each a list of steps
 * (parse.ts: transactional, online, backfill, preflight; a file without step
 * lines is one transactional step), recorded per step in
 * `svc_migration_steps` and per file, with a checksum, in `svc_migrations`.
 * No session lock: every decision is taken in a short transaction under
 * `pg_advisory_xact_lock`, so it runs through a transaction pooler too
 * (docs/adr/019-online-migrations.md).
 */
import { randomBytes } from 'node:crypto';
import type { Db, Tx } from '../types.ts';
import type { Step } from './parse.ts';
import { parseFile, pendingOf, readSet, type MigrationSet } from './files.ts';
import { appliedChecksums, createTables, editedMidway, type Claimant, type MigrationFile } from './store.ts';
import { contractHolders, describeHolders, type Holder } from './gate.ts';
import { MigrationError } from './errors.ts';
import { runBackfillStep, runOnline, runPreflight, runTransactional, stepName, type StepContext } from './run.ts';
import { LockDeadlineError, type MigrateLog } from './retry.ts';
import { settingsFromEnv, type MigrateSettings } from './settings.ts';

export { MigrationError } from './errors.ts';
export { appliedMigrations, runningSteps, type RunningStep } from './store.ts';
export { MIGRATIONS_NOTIFY_CHANNEL, MIGRATIONS_REALTIME_CHANNEL, type MigrationNews, type BackfillProgress, type FileApplied } from './news.ts';
export { readSet, type MigrationSet } from './files.ts';
export type { Holder } from './gate.ts';
export type { MigrateLog } from './retry.ts';
export type { MigrateSettings } from './settings.ts';
export { parseMigration, splitStatements, StepFormatError, type Step, type StepKind, type ParsedMigration } from './parse.ts';
export { planMigrations, planFilesOffline, formatPlan, type PlannedStep } from './plan.ts';
export { classifyStatement, binaryCompatible, blocks, type StatementClass, type LockMode, type TableFacts } from './classify.ts';

export interface MigrateOptions {
  readonly log?: MigrateLog;
  /** Overrides of the settings read from the environment (settings.ts). */
  readonly settings?: Partial<MigrateSettings>;
  /** Log the held-back contract file (default true; a retry that said it once at start passes false). */
  readonly sayHeldBack?: boolean;
}

export interface MigrateResult {
  /** `scope/name` of every file applied by this run. */
  readonly applied: string[];
  /** A contract file held back by live instances of an older build (nothing from it on was applied). */
  readonly heldBack: { readonly file: string; readonly holders: readonly Holder[]; readonly message: string } | null;
}

const SILENT: MigrateLog = { info: () => undefined, warn: () => undefined };

/** The newest migration file name of `scope` in this build (the schema version an instance registers), or null. */
export function newestMigration(sets: readonly MigrationSet[], scope = 'schema'): string | null {
  const names = sets.filter((set) => set.scope === scope).flatMap(readSet).map((file) => file.name).sort();
  return names.at(-1) ?? null;
}

/** Applies pending migrations of every set, in order. Returns the applied files (`scope/name`). */
export async function migrate(db: Db, sets: readonly MigrationSet[], options: MigrateOptions = {}): Promise<string[]> {
  return (await runMigrations(db, sets, options)).applied;
}

export async function runMigrations(db: Db, sets: readonly MigrationSet[], options: MigrateOptions = {}): Promise<MigrateResult> {
  const files = sets.flatMap(readSet);
  const settings = { ...settingsFromEnv(), ...options.settings };
  const log = options.log ?? SILENT;
  const claimant: Claimant = { token: randomBytes(8).toString('hex') };
  return db.task('svc-migrate', async (t) => {
    // Reads, waits for other instances and vacuum may rightly run long: no statement timeout on this session (steps set their own).
    await t.none('set statement_timeout = 0');
    try {
      return await runPending(t, files, { claimant, settings, log, sayHeldBack: options.sayHeldBack ?? true });
    } finally {
      await t.none('reset statement_timeout'); // the connection goes back to the pool
    }
  });
}

interface Run { readonly claimant: Claimant; readonly settings: MigrateSettings; readonly log: MigrateLog; readonly sayHeldBack: boolean }

async function runPending(t: Tx, files: MigrationFile[], { claimant, settings, log, sayHeldBack }: Run): Promise<MigrateResult> {
  await createTables(t);
  const applied: string[] = [];
  for (const file of pendingOf(files, await appliedChecksums(t))) {
    const parsed = parseFile(file);
    if (parsed.contractOf !== null) {
      const holders = await contractHolders(t, file);
      if (holders.length > 0) {
        const message = describeHolders(file, holders);
        if (sayHeldBack) log.warn({ file: `${file.scope}/${file.name}`, holders }, message);
        return { applied, heldBack: { file: `${file.scope}/${file.name}`, holders, message } };
      }
    }
    if (await editedMidway(t, file)) {
      throw new MigrationError(`${file.path}: migration was edited while it was partly applied (checksum mismatch in svc_migration_steps); restore it`);
    }
    for (const step of parsed.steps) {
      await runStep({ t, file, step, last: step === parsed.steps.at(-1), claimant, settings, log }, parsed.steps.length);
    }
    applied.push(`${file.scope}/${file.name}`);
  }
  return { applied, heldBack: null };
}

const RUNNERS: Record<Step['kind'], (c: StepContext, what: string) => Promise<void>> = {
  transactional: runTransactional,
  online: runOnline,
  backfill: runBackfillStep,
  preflight: runPreflight,
};

async function runStep(c: StepContext, count: number): Promise<void> {
  const what = stepName(c.file, c.step, count);
  if (count > 1) c.log.info({ step: c.step.number, kind: c.step.kind }, `${what}: starting`);
  try {
    await RUNNERS[c.step.kind](c, what);
  } catch (error) {
    if (error instanceof MigrationError) throw error;
    if (error instanceof LockDeadlineError) throw new MigrationError(error.message);
    const at = count === 1 && c.step.line === 0 ? c.file.path : `${c.file.path} step ${c.step.number} (${c.step.kind}: ${c.step.description})`;
    throw new MigrationError(`${at}: ${(error as Error).message}`);
  }
}

/**
 * Applied migrations this build has no file for: the database was migrated by
 * a newer version (of svc-gen or of the schema). Used at boot and by /ready.
 */
export async function unknownMigrations(db: Db, sets: readonly MigrationSet[]): Promise<string[]> {
  return unknownOf(sets.flatMap(readSet), await appliedChecksums(db));
}

function unknownOf(files: MigrationFile[], applied: Map<string, string>): string[] {
  const known = new Set(files.map((file) => `${file.scope}/${file.name}`));
  return [...applied.keys()].filter((key) => !known.has(key)).sort();
}

/**
 * Files not yet applied (throws MigrationError on an edited file) and unknown
 * applied migrations, from one read of the files and one of `svc_migrations`.
 * A contract file held back by older instances, and the files after it, are
 * `heldBack`, not pending: the runner rightly stops before them.
 * Used by /ready, which reads the files each time: a deploy may add one.
 */
export async function migrationStatus(db: Db, sets: readonly MigrationSet[]): Promise<{ pending: string[]; unknown: string[]; heldBack: string[] }> {
  const files = sets.flatMap(readSet);
  const applied = await appliedChecksums(db);
  const pending = pendingOf(files, applied);
  const names = (list: MigrationFile[]) => list.map((file) => `${file.scope}/${file.name}`);
  for (const [i, file] of pending.entries()) {
    if (parseFile(file).contractOf === null) continue;
    if ((await contractHolders(db, file)).length === 0) continue;
    return { pending: names(pending.slice(0, i)), unknown: unknownOf(files, applied), heldBack: names(pending.slice(i)) };
  }
  return { pending: names(pending), unknown: unknownOf(files, applied), heldBack: [] };
}
