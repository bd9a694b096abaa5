/**
 * Periodic work (runtime/core/periodic.ts) and the one advisory lock list
 * (runtime/db/locks.ts): two instances on one database run a periodic task
 * once per tick between them, and no two lock keys are the same.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimTick, periodic } from '../../runtime/core/periodic.ts';
import { openDatabase, type Database } from '../../runtime/db/index.ts';
import { CONSUMER_LOCK_CLASS, LOCK_KEYS } from '../../runtime/db/locks.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

const FIXTURE = `${import.meta.dirname}/../workflows/fixtures/depth/schema.ts`;
const log = pino({ level: 'silent' });

let database: TestDatabase;
let instances: Database[];

beforeAll(async () => {
  database = await createTestDatabase('svc_t', { fixture: FIXTURE });
  instances = await Promise.all([1, 2].map(() => openDatabase({ url: database.url, poolSize: 3 })));
});
afterAll(async () => {
  await Promise.all((instances ?? []).map((d) => d.close()));
  await database?.drop();
});

describe('periodic', () => {
  it('lets exactly one of two instances claim a tick', async () => {
    const task = { name: 'claim', everyMs: 60_000, lockKey: LOCK_KEYS.periodicAuditRetention };
    const claims = await Promise.all(instances.flatMap((d) => [claimTick(d.db, task), claimTick(d.db, task)]));
    expect(claims.filter((c) => c !== null)).toHaveLength(1);
    expect(await claimTick(instances[0].db, task)).toBeNull();
  });

  it('runs a task once per tick between two instances', async () => {
    const runs: Array<{ instance: number; tick: number }> = [];
    let enough: () => void;
    const fiveTicks = new Promise<void>((resolve) => (enough = resolve));
    const tasks = instances.map((d, instance) => periodic(d.db, log, {
      name: 'tick', everyMs: 150, lockKey: LOCK_KEYS.periodicAuditRetention,
      async run(tick) {
        runs.push({ instance, tick });
        if (new Set(runs.map((r) => r.tick)).size >= 5) enough();
      },
    }));
    await fiveTicks;
    await Promise.all(tasks.map((t) => t.stop()));
    const ticks = runs.map((r) => r.tick);
    expect(new Set(ticks).size).toBe(ticks.length);
    expect(ticks).toEqual([...ticks].sort((a, b) => a - b));
  });
});

describe('the advisory lock keys', () => {
  it('are all different', () => {
    const keys = Object.values(LOCK_KEYS);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).not.toContain(CONSUMER_LOCK_CLASS);
  });
});
