/**
 * syncSchedules at start: an unchanged schedule keeps its next tick (missed
 * ticks are then caught up), a changed cron or time zone starts afresh, and a
 * workflow no longer scheduled loses its row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { scheduledWorkflows, syncSchedules } from '../../runtime/workflows/schedule.ts';
import { TICKER } from './helpers.ts';

let database: TestDatabase;
let service: TestService;

beforeAll(async () => {
  database = await createTestDatabase();
  service = await startTestService({ fixture: TICKER, database });
});
afterAll(async () => {
  await service?.stop();
  await database?.drop();
});

const rows = () => service.ctx.db.manyOrNone<{ workflow: string; cron: string; timezone: string; next_at: string }>(
  `select workflow, cron, timezone, to_char(next_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') as next_at
     from svc_workflow_schedules order by workflow`);

describe('schedule rows at start', { timeout: 60_000 }, () => {
  it('keeps an unchanged schedule, restarts a changed one and removes a dropped one', async () => {
    const scheduled = scheduledWorkflows(service.ctx.ir.workflows);
    const tick = scheduled.find((w) => w.name === 'tick')!;
    expect(tick).toBeDefined();
    // Far ahead, so the running scheduler leaves it alone; a restart must not move it.
    await service.ctx.db.none(`update svc_workflow_schedules set next_at = '2031-01-01T00:00:00Z' where workflow = 'tick'`);
    await syncSchedules(service.ctx.db, scheduled);
    expect(await rows()).toEqual([{ workflow: 'tick', cron: tick.trigger.cron, timezone: tick.trigger.timezone, next_at: '2031-01-01T00:00:00Z' }]);

    const hourly = { ...tick, trigger: { ...tick.trigger, cron: '0 * * * *' } };
    await syncSchedules(service.ctx.db, [hourly]);
    const [changed] = await rows();
    expect(changed).toMatchObject({ workflow: 'tick', cron: '0 * * * *' });
    expect(changed.next_at).toMatch(/T\d\d:00:00Z$/);
    expect(Date.parse(changed.next_at)).toBeGreaterThan(Date.now() - 1_000);
    expect(Date.parse(changed.next_at)).toBeLessThanOrEqual(Date.now() + 3_600_000);

    const elsewhere = { ...hourly, trigger: { ...hourly.trigger, timezone: 'Asia/Kolkata' } };
    await syncSchedules(service.ctx.db, [elsewhere]);
    // Kolkata is UTC+05:30: its top of the hour is half past in UTC.
    expect((await rows())[0]).toMatchObject({ timezone: 'Asia/Kolkata', next_at: expect.stringMatching(/T\d\d:30:00Z$/) });

    await syncSchedules(service.ctx.db, []);
    expect(await rows()).toEqual([]);
  });
});
