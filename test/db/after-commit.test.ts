/**
 * After-commit hooks on the transaction helper (runtime/db/after-commit.ts):
 * `afterCommit(t, fn)` runs `fn` once `t`'s transaction commits, never when
 * it rolls back; a savepoint's hooks wait for the enclosing commit and go
 * with a savepoint rolled back. On the real Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { afterCommit, openDatabase, type Database } from '../../runtime/db/index.ts';
import { ADMIN_URL } from '../helpers/db.ts';

let database: Database;

beforeAll(async () => {
  database = await openDatabase({ url: ADMIN_URL, poolSize: 2 });
});
afterAll(async () => {
  await database?.close();
});

describe('afterCommit', () => {
  it('runs the hook once the transaction commits, not before', async () => {
    const seen: string[] = [];
    const result = await database.db.tx(async (t) => {
      afterCommit(t, () => seen.push('hook'));
      await t.one('select 1 as one');
      seen.push('work done');
      return 'result';
    });
    seen.push('resolved');
    expect(result).toBe('result');
    expect(seen).toEqual(['work done', 'hook', 'resolved']);
  });

  it('never runs it when the transaction rolls back', async () => {
    let ran = 0;
    await expect(database.db.tx(async (t) => {
      afterCommit(t, () => ran++);
      await t.one('select 1/0 as boom');
    })).rejects.toThrow(/division by zero/);
    await expect(database.db.tx(async (t) => {
      afterCommit(t, () => ran++);
      throw new Error('refused');
    })).rejects.toThrow('refused');
    expect(ran).toBe(0);
  });

  it('runs hooks in order, each once, and a throwing one stops none of the others', async () => {
    const seen: number[] = [];
    const warned = new Promise<Error>((resolve) => process.once('warning', resolve));
    await database.db.tx(async (t) => {
      afterCommit(t, () => seen.push(1));
      afterCommit(t, () => {
        throw new Error('hook failed');
      });
      afterCommit(t, () => seen.push(3));
    });
    expect(seen).toEqual([1, 3]);
    expect((await warned).message).toBe('hook failed');
    await database.db.tx((t) => t.one('select 1 as one'));
    expect(seen).toEqual([1, 3]);
  });

  it('keeps a savepoint\'s hooks for the enclosing commit, and drops those of a savepoint rolled back', async () => {
    const seen: string[] = [];
    await database.db.tx(async (t) => {
      await t.tx(async (inner) => {
        afterCommit(inner, () => seen.push('released'));
      });
      await t.tx(async (inner) => {
        afterCommit(inner, () => seen.push('rolled back'));
        throw new Error('savepoint refused');
      }).catch(() => undefined);
      seen.push('outer work done');
    });
    expect(seen).toEqual(['outer work done', 'released']);

    seen.length = 0;
    await expect(database.db.tx(async (t) => {
      await t.tx(async (inner) => afterCommit(inner, () => seen.push('released, then rolled back')));
      throw new Error('outer refused');
    })).rejects.toThrow('outer refused');
    expect(seen).toEqual([]);
  });

  it('reaches the transaction from a task inside it, and refuses a task outside any', async () => {
    let ran = 0;
    await database.db.tx((t) => t.task(async (task) => afterCommit(task, () => ran++)));
    expect(ran).toBe(1);
    await expect(database.db.task(async (task) => afterCommit(task, () => ran++))).rejects.toThrow(/needs an open transaction/);
    expect(ran).toBe(1);
  });
});
