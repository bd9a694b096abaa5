/** The runner's knobs from the environment: defaults, overrides, and a malformed value named. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, settingsFromEnv } from '../../runtime/db/migrate/settings.ts';
import { backoff, MAX_BACKOFF_MS } from '../../runtime/db/migrate/retry.ts';

describe('settingsFromEnv', () => {
  it('defaults to a 100 ms lock timeout, 15 s statement timeout, 600 s deadline, 10,000-row batches', () => {
    expect(settingsFromEnv({})).toEqual(DEFAULT_SETTINGS);
    expect(DEFAULT_SETTINGS).toMatchObject({ lockTimeoutMs: 100, statementTimeoutMs: 15_000, deadlineSecs: 600, batchRows: 10_000 });
  });

  it('reads each variable', () => {
    expect(settingsFromEnv({
      SVC_MIGRATE_LOCK_TIMEOUT_MS: '250', SVC_MIGRATE_STATEMENT_TIMEOUT_MS: '0', SVC_MIGRATE_DEADLINE_SECS: '30',
      SVC_MIGRATE_BATCH_ROWS: '500', SVC_MIGRATE_BATCH_PAUSE_MS: '0',
    })).toEqual({ lockTimeoutMs: 250, statementTimeoutMs: 0, deadlineSecs: 30, batchRows: 500, batchPauseMs: 0 });
  });

  it('refuses a malformed value, naming the variable', () => {
    expect(() => settingsFromEnv({ SVC_MIGRATE_LOCK_TIMEOUT_MS: '0' })).toThrow('SVC_MIGRATE_LOCK_TIMEOUT_MS=0: expected an integer from 1 to 600000');
    expect(() => settingsFromEnv({ SVC_MIGRATE_BATCH_ROWS: 'many' })).toThrow('SVC_MIGRATE_BATCH_ROWS=many');
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
