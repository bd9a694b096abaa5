/**
 * Scheduled workflows fire once per tick across all instances. Each has a
 * row in svc_workflow_schedules holding its next tick. Every instance
 * sleeps until the earliest tick, then tries to move the row from that tick
 * to the following one with a compare-and-set (`where next_at = <the tick it
 * read>`): exactly one instance's update matches, and it starts the run in
 * the same transaction. Times are the database's: instances' clocks may
 * differ, the decision does not.
 *
 * Catch-up after downtime: ticks missed while no instance ran collapse into
 * ONE run, started at once for the oldest missed tick (its `scheduledFor`);
 * the next tick is then the first one after now. A workflow whose cron or
 * timezone changed starts afresh at its next tick (nothing is caught up).
 */
import { Cron } from 'croner';
import { isoUtcSql, type Db } from '../db/index.ts';
import type { WorkflowDef } from '../ir/types.ts';
import { compile, sql } from '../sql/index.ts';
import { startRun, started } from './start.ts';
import type { EngineDeps } from './types.ts';

/** Longest sleep between looks at the rows (another instance may have changed them during a deploy). */
const MAX_SLEEP_MS = 60_000;

type Scheduled = WorkflowDef & { readonly trigger: { readonly kind: 'schedule'; readonly cron: string; readonly timezone: string } };

export function scheduledWorkflows(workflows: readonly WorkflowDef[]): Scheduled[] {
  return workflows.filter((w): w is Scheduled => w.trigger.kind === 'schedule');
}

function nextTick(workflow: Scheduled, after: Date): Date | null {
  const cron = new Cron(workflow.trigger.cron, { timezone: workflow.trigger.timezone, paused: true });
  try {
    return cron.nextRun(after);
  } finally {
    cron.stop();
  }
}

/**
 * Creates or refreshes the rows of this build's schedules; removes rows of
 * workflows no longer scheduled. An unchanged schedule keeps its next tick (so
 * missed ticks are caught up) and is not recomputed: the first cron with a
 * time zone loads the zone's rules (~25 ms of a cold start).
 */
export async function syncSchedules(db: Db, workflows: readonly Scheduled[]): Promise<void> {
  await db.tx('svc-workflow-schedules-sync', async (t) => {
    const stored = await t.one<{ now: string; rows: Array<{ workflow: string; cron: string; timezone: string }> }>(
      `select ${isoUtcSql('now()')} as now,
              coalesce((select json_agg(json_build_object('workflow', workflow, 'cron', cron, 'timezone', timezone))
                          from svc_workflow_schedules), '[]') as rows`,
    );
    const now = new Date(stored.now);
    const current = new Map(stored.rows.map((row) => [row.workflow, row]));
    await t.none(compile(sql`
      delete from svc_workflow_schedules where not (workflow = any(${sql.value(workflows.map((w) => w.name), 'text[]')}))`));
    for (const workflow of workflows) {
      const row = current.get(workflow.name);
      if (row && row.cron === workflow.trigger.cron && row.timezone === workflow.trigger.timezone) continue;
      const next = nextTick(workflow, now);
      if (!next) continue;
      // A changed schedule starts afresh; the guard keeps another instance's identical row (a rolling deploy) as it is.
      await t.none(compile(sql`
        insert into svc_workflow_schedules (workflow, cron, timezone, next_at)
         values (${sql.value(workflow.name)}, ${sql.value(workflow.trigger.cron)}, ${sql.value(workflow.trigger.timezone)}, ${sql.value(next.toISOString())})
         on conflict (workflow) do update set cron = excluded.cron, timezone = excluded.timezone, next_at = excluded.next_at, updated_at = now()
          where svc_workflow_schedules.cron <> excluded.cron or svc_workflow_schedules.timezone <> excluded.timezone`));
    }
  });
}

interface Row {
  workflow: string;
  next_at: string;
  now: string;
}

export class Scheduler {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly byName: ReadonlyMap<string, Scheduled>;

  constructor(private readonly deps: EngineDeps, workflows: readonly Scheduled[]) {
    this.byName = new Map(workflows.map((w) => [w.name, w]));
  }

  start(): void {
    if (this.byName.size > 0) this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private tick(): void {
    this.timer = null;
    if (this.stopped) return;
    this.running = this.fireDue()
      .catch((err) => {
        this.deps.log.warn({ err }, 'workflow scheduler failed: trying again');
        return 1000;
      })
      .then((sleepMs) => {
        this.running = null;
        if (this.stopped) return;
        this.timer = setTimeout(() => this.tick(), Math.max(0, Math.min(sleepMs, MAX_SLEEP_MS)));
        this.timer.unref();
      });
  }

  /** Fires every due tick this instance wins; returns how long to sleep until the next one. */
  private async fireDue(): Promise<number> {
    const rows = await this.deps.db.manyOrNone<Row>(compile(sql`
      select workflow, ${sql.raw(isoUtcSql('next_at'))} as next_at, ${sql.raw(isoUtcSql('now()'))} as now
         from svc_workflow_schedules where workflow = any(${sql.value([...this.byName.keys()], 'text[]')})`));
    let sleepMs = MAX_SLEEP_MS;
    for (const row of rows) {
      const workflow = this.byName.get(row.workflow)!;
      const now = Date.parse(row.now);
      const at = Date.parse(row.next_at);
      if (at > now) {
        sleepMs = Math.min(sleepMs, at - now);
        continue;
      }
      const next = nextTick(workflow, new Date(Math.max(now, at)));
      if (next) await this.fire(workflow, row.next_at, next);
      sleepMs = 0; // look again at once: the row moved (here or elsewhere)
    }
    return sleepMs;
  }

  /** The compare-and-set: only the instance that moves the row from `tick` starts the run. */
  private async fire(workflow: Scheduled, tick: string, next: Date): Promise<void> {
    await this.deps.db.tx('svc-workflow-schedule-fire', async (t) => {
      const won = await t.oneOrNone(compile(sql`
        update svc_workflow_schedules set next_at = ${sql.value(next.toISOString())}, last_fired_at = now(), updated_at = now()
          where workflow = ${sql.value(workflow.name)} and next_at = ${sql.value(tick, 'timestamptz')} and next_at <= now()
          returning workflow`));
      if (!won) return;
      const runId = await startRun(t, this.deps, {
        definition: workflow, tenantId: null, trigger: { kind: 'schedule', scheduledFor: tick }, actor: null, depth: 0, scheduledFor: tick,
      });
      if (runId) started(t, this.deps);
    });
  }
}
