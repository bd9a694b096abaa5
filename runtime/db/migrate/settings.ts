/**
 * The runner's knobs, from the environment (docs/operations.md, "Running
 * migrations"). Read by the runner itself: it also runs without a service
 * config (`svc-gen migrate`, the tests' template databases).
 */
import { MigrationError } from './errors.ts';

export interface MigrateSettings {
  /** SVC_MIGRATE_LOCK_TIMEOUT_MS: the longest a step waits for a lock, and so the longest it queues clients behind it. */
  readonly lockTimeoutMs: number;
  /** SVC_MIGRATE_STATEMENT_TIMEOUT_MS: a transactional step's statement timeout. */
  readonly statementTimeoutMs: number;
  /** SVC_MIGRATE_DEADLINE_SECS: how long a step keeps retrying a lock it does not get. */
  readonly deadlineSecs: number;
  /** SVC_MIGRATE_BATCH_ROWS: rows per backfill transaction, at most (batches shrink to meet batchTargetMs). */
  readonly batchRows: number;
  /**
   * SVC_MIGRATE_BATCH_TARGET_MS: how long one backfill transaction should hold
   * its rows' locks: a client writing one of them waits that long at most.
   */
  readonly batchTargetMs: number;
  /** SVC_MIGRATE_BATCH_PAUSE_MS: pause between backfill batches. */
  readonly batchPauseMs: number;
  /**
   * SVC_MIGRATE_WAL_PACE_SECS: a backfill waits between batches so that the
   * server's WAL fills one checkpoint interval (max_wal_size / (1 +
   * checkpoint_completion_target)) in no less than this many seconds; 0 (the
   * default): no pacing. Unmeasured so far (ADR 019), hence off.
   */
  readonly walPaceSecs: number;
  /**
   * SVC_MIGRATE_VACUUM_COST_DELAY_MS: the `vacuum_cost_delay` of the
   * `vacuum (analyze)` that closes a backfill. A manual vacuum runs
   * unthrottled (Postgres' default 0); on a table whose every row the
   * backfill rewrote it dirties every page at full speed and its WAL lands in
   * the next checkpoint, where clients' commits wait. 2 (the default) is
   * autovacuum's own throttle; 0: unthrottled.
   */
  readonly vacuumCostDelayMs: number;
  /** SVC_MIGRATE_CONTRACT_RETRY_SECS: how often a running service looks again at a contract migration held back at its start. */
  readonly contractRetrySecs: number;
}

export const DEFAULT_SETTINGS: MigrateSettings = {
  lockTimeoutMs: 100,
  statementTimeoutMs: 15_000,
  deadlineSecs: 600,
  batchRows: 10_000,
  batchTargetMs: 100,
  batchPauseMs: 20,
  walPaceSecs: 0,
  vacuumCostDelayMs: 2,
  contractRetrySecs: 15,
};

/** Each setting's variable and bounds (the service's config reads them with its own readers: runtime/config). */
export const MIGRATE_VARIABLES: Record<keyof MigrateSettings, readonly [name: string, min: number, max: number]> = {
  lockTimeoutMs: ['SVC_MIGRATE_LOCK_TIMEOUT_MS', 1, 600_000],
  statementTimeoutMs: ['SVC_MIGRATE_STATEMENT_TIMEOUT_MS', 0, 86_400_000],
  deadlineSecs: ['SVC_MIGRATE_DEADLINE_SECS', 0, 86_400],
  batchRows: ['SVC_MIGRATE_BATCH_ROWS', 1, 1_000_000],
  batchTargetMs: ['SVC_MIGRATE_BATCH_TARGET_MS', 1, 60_000],
  batchPauseMs: ['SVC_MIGRATE_BATCH_PAUSE_MS', 0, 60_000],
  walPaceSecs: ['SVC_MIGRATE_WAL_PACE_SECS', 0, 3_600],
  vacuumCostDelayMs: ['SVC_MIGRATE_VACUUM_COST_DELAY_MS', 0, 100],
  contractRetrySecs: ['SVC_MIGRATE_CONTRACT_RETRY_SECS', 1, 86_400],
};

/** The settings in `env`, defaults for unset ones; a malformed value throws with the variable's name. */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): MigrateSettings {
  const settings: Record<string, number> = { ...DEFAULT_SETTINGS };
  for (const [key, [name, min, max]] of Object.entries(MIGRATE_VARIABLES)) {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') continue;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new MigrationError(`${name}=${raw}: expected an integer from ${min} to ${max}`);
    }
    settings[key] = value;
  }
  return settings as unknown as MigrateSettings;
}
