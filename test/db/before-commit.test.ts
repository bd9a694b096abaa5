/**
 * Before-commit hooks (runtime/db/before-commit.ts): `beforeCommit(t, key,
 * init, fn)` runs `fn` once per key as the outermost transaction's last work,
 * in that transaction, after its callback resolved and before COMMIT; a hook
 * that throws rolls the transaction back; outside a transaction it registers
 * nothing. On the real Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { beforeCommit, openDatabase, type Database } from '../../runtime/db/index.ts';
import { ADMIN_URL } from '../helpers/db.ts';

let database: Database;

beforeAll(async () => {
  database = await openDatabase({ url: ADMIN_URL, poolSize: 2 });
});
afterAll(async () => {
  await database?.close();
});

describe('beforeCommit', () => {
  it('runs once per key, last, inside the outermost transaction, with the state every registration shared', async () => {
    const seen: string[] = [];
    const key = Symbol('k');
    await database.db.tx(async (t) => {
      const state = beforeCommit(t, key, () => [] as string[], async (top, names) => {
        const row = await top.one('select $1::text as names', [names.join(',')]);
        seen.push(`hook ${row.names}`);
      });
      state!.push('a');
      await t.tx(async (inner) => {
        beforeCommit(inner, key, () => [] as string[], async () => void seen.push('never: same key'))!.push('b');
      });
      seen.push('callback done');
    });
    expect(seen).toEqual(['callback done', 'hook a,b']);
  });

  it('a hook that throws rolls the transaction back; none runs when the callback throws', async () => {
    const table = `h_tfeed_bc_${process.pid}`;
    await database.db.none(`create table if not exists ${table} (n int)`);
    try {
      await expect(database.db.tx(async (t) => {
        await t.none(`insert into ${table} values (1)`);
        beforeCommit(t, 'k', () => null, async () => {
          throw new Error('refused before commit');
        });
      })).rejects.toThrow(/refused before commit/);
      let ran = 0;
      await expect(database.db.tx(async (t) => {
        beforeCommit(t, 'k', () => null, async () => void ran++);
        throw new Error('callback failed');
      })).rejects.toThrow(/callback failed/);
      expect(ran).toBe(0);
      expect((await database.db.one(`select count(*)::int as n from ${table}`)).n).toBe(0);
    } finally {
      await database.db.none(`drop table if exists ${table}`);
    }
  });

  it('outside a transaction it registers nothing (the caller works at once)', async () => {
    expect(beforeCommit(database.db as never, 'k', () => 1, async () => undefined)).toBeNull();
    await database.db.task(async (t) => {
      expect(beforeCommit(t, 'k', () => 1, async () => undefined)).toBeNull();
    });
  });
});
