/** The runner's knobs from the environment: defaults, overrides, and a malformed value named. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, settingsFromEnv } from '../../runtime/db/migrate/settings.ts';
import { backoff, MAX_BACKOFF_MS } from '../../runtime/db/migrate/retry.ts';
import { MIN_BATCH_ROWS, nextBatchRows, paceDelayMs } from '../../runtime/db/migrate/backfill.ts';

describe('settingsFromEnv', () => {
  it('defaults to a 100 ms lock timeout, 15 s statement timeout, 600 s deadline, 10,000-row batches', () => {
    expect(settingsFromEnv({})).toEqual(DEFAULT_SETTINGS);
    expect(DEFAULT_SETTINGS).toMatchObject({ lockTimeoutMs: 100, statementTimeoutMs: 15_000, deadlineSecs: 600, batchRows: 10_000, batchTargetMs: 100, contractRetrySecs: 15, walPaceSecs: 0 });
  });

  it('reads each variable', () => {
    expect(settingsFromEnv({
      SVC_MIGRATE_LOCK_TIMEOUT_MS: '250', SVC_MIGRATE_STATEMENT_TIMEOUT_MS: '0', SVC_MIGRATE_DEADLINE_SECS: '30',
      SVC_MIGRATE_BATCH_ROWS: '500', SVC_MIGRATE_BATCH_PAUSE_MS: '0', SVC_MIGRATE_BATCH_TARGET_MS: '50', SVC_MIGRATE_CONTRACT_RETRY_SECS: '5',
      SVC_MIGRATE_WAL_PACE_SECS: '30', SVC_MIGRATE_VACUUM_COST_DELAY_MS: '0',
    })).toEqual({ lockTimeoutMs: 250, statementTimeoutMs: 0, deadlineSecs: 30, batchRows: 500, batchPauseMs: 0, batchTargetMs: 50, contractRetrySecs: 5, walPaceSecs: 30, vacuumCostDelayMs: 0 });
  });

  it('refuses a malformed value, naming the variable', () => {
    expect(() => settingsFromEnv({ SVC_MIGRATE_LOCK_TIMEOUT_MS: '0' })).toThrow('SVC_MIGRATE_LOCK_TIMEOUT_MS=0: expected an integer from 1 to 600000');
    expect(() => settingsFromEnv({ SVC_MIGRATE_BATCH_ROWS: 'many' })).toThrow('SVC_MIGRATE_BATCH_ROWS=many');
  });
});

describe('nextBatchRows: a backfill batch holds its row locks for about the target', () => {
  it.each([
    // rows, took ms, target ms, max rows -> next
    [10_000, 400, 100, 10_000, 5_000], // over twice the target: halved
    [10_000, 150, 100, 10_000, 10_000], // near the target: kept
    [4_000, 20, 100, 10_000, 6_000], // under half of it: grown by half
    [8_000, 10, 100, 10_000, 10_000], // never above SVC_MIGRATE_BATCH_ROWS
    [150, 5_000, 100, 10_000, MIN_BATCH_ROWS], // never below the floor
    [50, 5_000, 100, 50, 50], // a maximum below the floor is the floor
  ])('%i rows in %i ms (target %i, max %i) -> %i', (rows, took, target, max, next) => {
    expect(nextBatchRows(rows, took, target, max)).toBe(next);
  });
});

describe('backoff', () => {
  it('doubles from the lock timeout, jittered to half-full, capped at a second', () => {
    for (let attempt = 1; attempt <= 12; attempt++) {
      const ceiling = Math.min(MAX_BACKOFF_MS, 100 * 2 ** (attempt - 1));
      for (let i = 0; i < 50; i++) {
        const delay = backoff(attempt, 100);
        expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    }
  });
});

describe('paceDelayMs: a big backfill writes WAL no faster than one checkpoint interval per SVC_MIGRATE_WAL_PACE_SECS', () => {
  const mb = 1_048_576;
  it.each([
    // WAL bytes since the last look, budget bytes/s, ms since the last look -> wait
    [18 * mb, 18 * mb, 250, 750], // a second's budget written in 250 ms: wait the rest of the second
    [18 * mb, 18 * mb, 1_500, 0], // written slower than the budget: no wait
    [0, 18 * mb, 10, 0],
    [1_000 * mb, 18 * mb, 0, 10_000], // other sessions' burst: at most 10 s at a time
  ])('%d bytes at %d bytes/s after %d ms: wait %d ms', (bytes, rate, elapsed, wait) => {
    expect(paceDelayMs(bytes, rate, elapsed)).toBe(wait);
  });
});
