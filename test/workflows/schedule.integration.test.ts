/**
 * A schedule of every two seconds with two instances on one database: each
 * tick starts exactly one run (the compare-and-set on its schedule row
 * decides), no tick is skipped; after downtime the missed ticks are caught
 * up as ONE run, then the schedule continues from now.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { TICKER } from './helpers.ts';

const ENV = { SVC_WORKFLOW_POLL_MS: '200' };

let database: TestDatabase;
let first: TestService;
let second: TestService;

beforeAll(async () => {
  database = await createTestDatabase();
  first = await startTestService({ fixture: TICKER, env: ENV, database });
  second = await startTestService({ fixture: TICKER, env: ENV, database });
});
afterAll(async () => {
  await second?.stop();
  await first?.stop();
  await database?.drop();
});

async function sql(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Resolves when `count` runs finished, as announced by the change feed of `service`. */
async function runsFinished(service: TestService, count: number): Promise<void> {
  const subscription = service.ctx.services.feed.subscribe({ accepts: (c) => c.modelName === 'WorkflowRun' && c.eventType === 'WorkflowRunSucceeded' });
  let seen = 0;
  for await (const _ of subscription) {
    if (++seen >= count) break;
  }
  subscription.close();
}

interface TickRow {
  scheduled_for: string;
  n: number;
}

const ticks = () => first.ctx.db.manyOrNone<TickRow>(
  `select to_char(scheduled_for at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as scheduled_for, count(*)::int as n
     from svc_workflow_runs where workflow = 'tick' group by scheduled_for order by scheduled_for`);

describe('a schedule with two instances', { timeout: 60_000 }, () => {
  it('fires once per tick, every tick', async () => {
    await runsFinished(first, 4);
    const rows = await ticks();
    expect(rows.length).toBeGreaterThanOrEqual(4);
    expect(rows.every((row) => row.n === 1)).toBe(true);
    const times = rows.map((row) => Date.parse(row.scheduled_for));
    for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBe(2000);
    expect(times.every((t) => new Date(t).getUTCSeconds() % 2 === 0 && t % 1000 === 0)).toBe(true);
    // Each run did its step once: one Beat per run.
    const beats = await first.ctx.db.one<{ n: number }>('select count(*)::int as n from "beat"');
    const runs = await first.ctx.db.one<{ n: number }>(`select count(*)::int as n from svc_workflow_runs where status = 'succeeded'`);
    expect(beats.n).toBe(runs.n);
  });

  it('catches up missed ticks as one run after downtime, then goes on from now', async () => {
    await second.stop();
    await first.stop();
    // Downtime of 100 days, as the schedule row sees it: its next tick lies that far back.
    await sql(`update svc_workflow_schedules set next_at = next_at - interval '100 days'`);
    const restartedAt = Date.now();
    first = await startTestService({ fixture: TICKER, env: ENV, database });
    await runsFinished(first, 2);
    const rows = await ticks();
    const caughtUp = rows.filter((row) => Date.parse(row.scheduled_for) < restartedAt - 86_400_000);
    expect(caughtUp).toHaveLength(1);
    const after = rows.filter((row) => Date.parse(row.scheduled_for) >= restartedAt - 2000);
    expect(after.length).toBeGreaterThanOrEqual(1);
    expect(rows.every((row) => row.n === 1)).toBe(true);
    second = await startTestService({ fixture: TICKER, env: ENV, database });
  });
});
