/** The embedded database's lockfile keeps a second opener off the data folder. */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pgPromise from 'pg-promise';
import { expect, it } from 'vitest';
import { openEmbedded, EmbeddedLockedError } from '../../runtime/db/embedded.ts';

it('refuses a second opener while the first holds the folder, and releases it on close', { timeout: 60_000 }, async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'svc-lock-')), 'pgdata');
  const pgp = pgPromise({ noWarnings: true });
  const first = await openEmbedded(pgp, dir);
  try {
    expect(existsSync(`${dir}.lock`)).toBe(true);
    await expect(openEmbedded(pgp, dir)).rejects.toBeInstanceOf(EmbeddedLockedError);
    expect(await first.db.one('select 1 as ok')).toEqual({ ok: 1 });
  } finally {
    await first.close();
  }
  expect(existsSync(`${dir}.lock`)).toBe(false);
});

it('takes over the lock of a process that no longer runs', { timeout: 60_000 }, async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'svc-lock-')), 'pgdata');
  writeFileSync(`${dir}.lock`, '999999999');
  const database = await openEmbedded(pgPromise({ noWarnings: true }), dir);
  await database.close();
  expect(existsSync(`${dir}.lock`)).toBe(false);
});
