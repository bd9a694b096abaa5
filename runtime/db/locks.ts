/**
 * Every advisory lock key the runtime takes, in one list, so that two never
 * collide. Keys are "svc-gen" as a 64-bit prefix (7_305_648_312_NNN) and a
 * number; durable feed consumers use the two-int form (a class and
 * hashtext(name)), a key space Postgres keeps apart from the bigint one
 * (pg_locks.objsubid 2, not 1). A new key is added here, never written
 * where it is taken.
 *
 * All are transaction-scoped (`pg_advisory_xact_lock`, `pg_try_advisory_xact_lock`),
 * so they work through a transaction pooler (the migrations' lock too, since
 * ADR 019: one short transaction per decision, claims for long steps), except
 * the projection indexes' one, taken for a session on the direct connection
 * (DatabaseOptions.directUrl).
 */
export const LOCK_KEYS = {
  /** Migrations: each step's transaction and each claim of a step (runtime/db/migrate/store.ts). */
  migrations: 7_305_648_312_001,
  /** The event history's retention and coverage (events/history.ts). */
  history: 7_305_648_312_002,
  /** Projection rebuilds and refreshes (projections/). */
  projections: 7_305_648_312_003,
  /** One instance at a time builds missing projection indexes (projections/indexes.ts: a session lock on the direct connection). */
  projectionIndexes: 7_305_648_312_030,
  /** Each batch of the audit retention sweep (audit/retention.ts). */
  auditRetention: 7_305_648_312_012,
  /** Each batch of the audit statistics' rollup fold (audit/rollup.ts). */
  auditRollup: 7_305_648_312_013,
  /** Each batch of the job retention sweep (jobs/retention.ts). */
  jobRetention: 7_305_648_312_041,
  /** Each fold of the job count deltas into the counters (jobs/counts.ts), and the truncate trigger of jobs migration 0004. */
  jobCountsFold: 7_305_648_312_042,
  /** Periodic tasks' tick claims (core/periodic.ts), one key each. */
  periodicAuditRetention: 7_305_648_312_020,
  periodicJobsReclaim: 7_305_648_312_021,
  periodicMediaSweep: 7_305_648_312_022,
  periodicHistorySweep: 7_305_648_312_023,
  periodicLoginThrottleSweep: 7_305_648_312_031,
  periodicJobRetention: 7_305_648_312_043,
  periodicJobCountsFold: 7_305_648_312_044,
  /** The retry of a contract migration held back at start (service/contracts.ts), one instance at a time. */
  periodicContractRetry: 7_305_648_312_050,
  periodicAuditRollup: 7_305_648_312_024,
} as const;

/** The class (first int) of durable feed consumers' two-int keys; the second is hashtext(consumer name). */
export const CONSUMER_LOCK_CLASS = 7305;

export type LockKey = (typeof LOCK_KEYS)[keyof typeof LOCK_KEYS];
