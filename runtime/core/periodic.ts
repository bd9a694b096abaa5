/**
 * Periodic work across instances: `periodic({ name, everyMs, lockKey, run })`
 * runs `run` once per tick of `everyMs` between all instances sharing the
 * database. A tick is the database clock's epoch milliseconds over `everyMs`,
 * so every instance counts the same ticks. Each instance looks every
 * `everyMs` (and once at start): in a short transaction it takes the task's
 * transaction-scoped advisory lock with `try` (one claimant at a time; it
 * works through a transaction pooler) and moves the task's row in
 * `svc_periodic` to the current tick; only the instance whose update moved it
 * runs the tick, after that transaction commits, so the work is free to use
 * its own transactions and locks. A run still going is never started twice
 * by one instance; `stop()` waits for it.
 */
import type { Db } from '../db/index.ts';
import type { LockKey } from '../db/locks.ts';
import type { Logger } from '../log/index.ts';
import { compile, sql } from '../sql/index.ts';

export interface PeriodicTask {
  /** Unique among tasks: the row in svc_periodic. */
  readonly name: string;
  readonly everyMs: number;
  /** The task's key in runtime/db/locks.ts. */
  readonly lockKey: LockKey;
  /** The tick's work; `tick` is its number (the same on every instance). */
  run(tick: number): Promise<void>;
}

export interface Periodic {
  stop(): Promise<void>;
}

const claim = (name: string, everyMs: number) => sql`insert into svc_periodic (name, last_tick)
  values (${sql.value(name)}, floor(extract(epoch from clock_timestamp()) * 1000 / ${sql.value(everyMs)})::bigint)
  on conflict (name) do update set last_tick = excluded.last_tick
   where svc_periodic.last_tick < excluded.last_tick
  returning last_tick`;

/** The current tick when this instance claimed it; null when another instance has it or had it. */
export async function claimTick(db: Db, task: Pick<PeriodicTask, 'name' | 'everyMs' | 'lockKey'>): Promise<number | null> {
  return db.tx('svc-periodic-claim', async (t) => {
    const { locked } = await t.one<{ locked: boolean }>(compile(sql`
      select pg_try_advisory_xact_lock(${sql.value(task.lockKey, 'bigint')}) as locked`));
    if (!locked) return null;
    const row = await t.oneOrNone<{ last_tick: number }>(compile(claim(task.name, task.everyMs)));
    return row ? Number(row.last_tick) : null;
  });
}

export function periodic(db: Db, log: Logger, task: PeriodicTask): Periodic {
  let running: Promise<void> | null = null;
  const look = () => {
    running ??= claimTick(db, task)
      .then((tick) => (tick === null ? undefined : task.run(tick)))
      .catch((err) => log.warn({ err, task: task.name }, 'periodic task failed'))
      .finally(() => (running = null));
  };
  look();
  const timer = setInterval(look, task.everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
