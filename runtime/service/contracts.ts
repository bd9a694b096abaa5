/**
 * A contract migration held back at start (ADR 020: a live instance of an
 * older build still uses what it drops) is retried while the service runs,
 * so it applies once the last old instance deregisters or its heartbeat
 * expires, without a restart (ADR 019). Every SVC_MIGRATE_CONTRACT_RETRY_SECS,
 * one instance at a time (a periodic task: its tick is claimed under a
 * transaction-scoped advisory lock, so it works through a transaction pooler)
 * runs the runner again on the direct connection; the runner itself holds the
 * file back again while an old instance remains, and records each file it
 * applies, which tells the realtime channel `migrations` (`{type:'applied'}`).
 * Once nothing is held back any more, the retry stops.
 */
import { runMigrations, type Db, type MigrationSet } from '../db/index.ts';
import type { MigrateSettings } from '../db/migrate/settings.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import type { Logger } from '../log/index.ts';
import { periodic } from '../core/periodic.ts';

export interface ContractRetry {
  stop(): Promise<void>;
}

export function retryHeldContracts(db: Db, direct: Db, sets: readonly MigrationSet[], log: Logger,
  options: { readonly settings: MigrateSettings; readonly heldBack: string }): ContractRetry {
  const heldSince = Date.now();
  const everySecs = options.settings.contractRetrySecs;
  let done = false;
  log.info({ file: options.heldBack, everySecs },
    `${options.heldBack} is held back: looking again every ${everySecs} s (SVC_MIGRATE_CONTRACT_RETRY_SECS) while the service runs`);
  const task = periodic(db, log, {
    name: 'migrations:contract-retry',
    everyMs: everySecs * 1000,
    lockKey: LOCK_KEYS.periodicContractRetry,
    async run() {
      if (done) return;
      const { applied, heldBack } = await runMigrations(direct, sets, { log, settings: options.settings, sayHeldBack: false });
      if (applied.length > 0) {
        log.info({ applied, heldForSecs: Math.round((Date.now() - heldSince) / 1000) },
          `migrations applied while running (held back since start, no old instance left): ${applied.join(', ')}`);
      }
      if (heldBack === null) done = true;
    },
  });
  return { stop: () => task.stop() };
}
