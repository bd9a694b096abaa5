/**
 * The engine's own SQL: runs and their step records (svc_workflow_runs,
 * svc_workflow_steps). Statements that change a run take a Tx: every change
 * of a run commits with the advance that made it.
 */
import { isoUtcSql, type Db, type Tx } from '../db/index.ts';
import type { WorkflowDef } from '../ir/types.ts';
import { compile, sql } from '../sql/index.ts';
import type { ReadScope, TenantScope } from '../tenancy/index.ts';

export const RUN_STATUSES = ['running', 'waiting', 'succeeded', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type StepStatus = 'running' | 'waiting' | 'succeeded' | 'failed' | 'skipped';

/** Who caused a run: the templates' `trigger.actor`, and whose permissions its mutations use. */
export interface RunActor {
  readonly id: string;
  readonly role: string;
  readonly tenantId: string | null;
}

export type TriggerData =
  | { readonly kind: 'event'; readonly model: string; readonly event: string; readonly eventId: string; readonly recordId: string; readonly record: unknown; readonly old: unknown }
  | { readonly kind: 'manual'; readonly input: unknown }
  | { readonly kind: 'schedule'; readonly scheduledFor: string };

export interface StepRecord {
  readonly position: number;
  readonly stepId: string;
  readonly status: StepStatus;
  readonly attempts: number;
  readonly output: unknown;
  readonly error: string | null;
  readonly jobId: string | null;
  readonly wakeAt: string | null;
  readonly startedAt: string;
  readonly finishedAt: string | null;
}

export interface RunState {
  readonly id: string;
  readonly workflow: string;
  readonly definition: WorkflowDef;
  readonly status: RunStatus;
  readonly tenantId: string | null;
  readonly trigger: TriggerData;
  readonly actor: RunActor | null;
  readonly depth: number;
  readonly vars: Record<string, unknown>;
  readonly position: number;
  readonly error: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly finishedAt: string | null;
  /** Step records by position. */
  readonly steps: ReadonlyMap<number, StepRecord>;
}

export interface NewRun {
  readonly id: string;
  readonly definition: WorkflowDef;
  readonly tenantId: string | null;
  readonly trigger: TriggerData;
  readonly actor: RunActor | null;
  readonly depth: number;
  readonly eventId: string | null;
  readonly scheduledFor: string | null;
}

const RUN_COLUMNS = sql.raw(`id, workflow, definition, status, tenant_id, trigger, actor, depth, vars, position, error,
  ${isoUtcSql('created_at')} as created_at, ${isoUtcSql('updated_at')} as updated_at, ${isoUtcSql('finished_at')} as finished_at`);

const STEP_COLUMNS = sql.raw(`position, step_id, status, attempts, output, error, job_id, ${isoUtcSql('wake_at')} as wake_at,
  ${isoUtcSql('started_at')} as started_at, ${isoUtcSql('finished_at')} as finished_at`);

const json = (value: unknown) => sql.value(JSON.stringify(value), 'jsonb');
const NULL_JSON = sql.value(null, 'jsonb');

/** Inserts a run; false when its event or tick already started this workflow (nothing written). */
export async function insertRun(t: Tx, run: NewRun): Promise<boolean> {
  const row = await t.oneOrNone(compile(sql`
    insert into svc_workflow_runs (id, workflow, definition, status, tenant_id, trigger, actor, depth, event_id, scheduled_for, created_by)
     values (${sql.value(run.id, 'text')}, ${sql.value(run.definition.name, 'text')}, ${json(run.definition)}, 'running',
             ${sql.value(run.tenantId, 'text')}, ${json(run.trigger)}, ${run.actor ? json(run.actor) : NULL_JSON}, ${sql.value(run.depth, 'int')},
             ${sql.value(run.eventId, 'text')}, ${sql.value(run.scheduledFor, 'timestamptz')}, ${sql.value(run.actor?.id ?? null, 'text')})
     on conflict do nothing returning id`));
  return row !== null;
}

/**
 * The run and its step records, in `scope` (the caller's, or SystemScope.ALL
 * for the engine); with `lock` (in a Tx) the run row is held until commit.
 */
export async function readRun(runner: Db | Tx, id: string, options: { readonly scope: ReadScope; readonly lock?: boolean }): Promise<RunState | null> {
  const run = await runner.oneOrNone(compile(sql`
    select ${RUN_COLUMNS} from svc_workflow_runs
     where id = ${sql.value(id, 'text')} and ${options.scope.localPredicate(null)}${options.lock ? sql` for update` : sql.empty}`, { scope: options.scope }));
  if (!run) return null;
  const steps = await runner.manyOrNone(compile(sql`
    select ${STEP_COLUMNS} from svc_workflow_steps where run_id = ${sql.value(id, 'text')} order by position`));
  return toRunState(run, steps);
}

function toRunState(run: any, steps: any[]): RunState {
  return {
    id: run.id, workflow: run.workflow, definition: run.definition, status: run.status, tenantId: run.tenant_id,
    trigger: run.trigger, actor: run.actor, depth: run.depth, vars: run.vars, position: run.position, error: run.error,
    createdAt: run.created_at, updatedAt: run.updated_at, finishedAt: run.finished_at,
    steps: new Map(steps.map((s) => [s.position, {
      position: s.position, stepId: s.step_id, status: s.status, attempts: s.attempts, output: s.output, error: s.error,
      jobId: s.job_id, wakeAt: s.wake_at, startedAt: s.started_at, finishedAt: s.finished_at,
    }])),
  };
}

/** A step record as written: the times are the database's (`now()`), the wake-up relative to it. */
export interface StepWrite extends Omit<StepRecord, 'wakeAt' | 'startedAt' | 'finishedAt'> {
  /** Seconds from now until the step is looked at again (delay, retry); null: none. */
  readonly wakeInSecs: number | null;
}

const TERMINAL: readonly StepStatus[] = ['succeeded', 'failed', 'skipped'];

export async function writeStep(t: Tx, runId: string, step: StepWrite): Promise<void> {
  const wakeIn = sql.value(step.wakeInSecs, 'double precision');
  await t.none(compile(sql`
    insert into svc_workflow_steps (run_id, position, step_id, status, attempts, output, error, job_id, wake_at, finished_at)
     values (${sql.value(runId, 'text')}, ${sql.value(step.position, 'int')}, ${sql.value(step.stepId, 'text')}, ${sql.value(step.status, 'text')},
             ${sql.value(step.attempts, 'int')}, ${step.output === undefined ? NULL_JSON : json(step.output)}, ${sql.value(step.error, 'text')},
             ${sql.value(step.jobId, 'text')},
             case when ${wakeIn} is null then null else now() + make_interval(secs => ${wakeIn}) end,
             case when ${sql.value(TERMINAL.includes(step.status), 'boolean')} then now() end)
     on conflict (run_id, position) do update
       set status = excluded.status, attempts = excluded.attempts, output = excluded.output, error = excluded.error,
           job_id = excluded.job_id, wake_at = excluded.wake_at, finished_at = excluded.finished_at`));
}

export interface RunWrite {
  readonly status: RunStatus;
  readonly position: number;
  readonly vars: Record<string, unknown>;
  readonly error: string | null;
}

export async function writeRun(t: Tx, runId: string, run: RunWrite): Promise<void> {
  const finished = run.status === 'succeeded' || run.status === 'failed';
  await t.none(compile(sql`
    update svc_workflow_runs set status = ${sql.value(run.status, 'text')}, position = ${sql.value(run.position, 'int')},
            vars = ${json(run.vars)}, error = ${sql.value(run.error, 'text')}, updated_at = now(),
            finished_at = case when ${sql.value(finished, 'boolean')} then now() end
      where id = ${sql.value(runId, 'text')}`));
}

export interface RunFilter {
  /** Workflows the caller may see; `workflow` narrows further. */
  readonly workflows: readonly string[];
  readonly status: RunStatus | null;
  readonly limit: number;
  /** Runs older than this id (the previous page's nextCursor). */
  readonly before: string | null;
}

export interface RunSummary {
  readonly id: string;
  readonly workflow: string;
  readonly status: RunStatus;
  readonly trigger: string;
  readonly error: string | null;
  readonly createdAt: string;
  readonly finishedAt: string | null;
}

const SUMMARY_TIMES = sql.raw(`${isoUtcSql('created_at')} as created_at, ${isoUtcSql('finished_at')} as finished_at`);

/** Newest first within `scope`. */
export async function listRuns(db: Db, scope: TenantScope, filter: RunFilter): Promise<RunSummary[]> {
  const where = [
    scope.localPredicate(null),
    sql`workflow = any(${sql.value(filter.workflows, 'text[]')})`,
    ...(filter.status ? [sql`status = ${sql.value(filter.status, 'text')}`] : []),
    ...(filter.before ? [sql`id < ${sql.value(filter.before, 'text')}`] : []),
  ];
  const rows = await db.manyOrNone(compile(sql`
    select id, workflow, status, trigger->>'kind' as trigger, error, ${SUMMARY_TIMES}
       from svc_workflow_runs where ${sql.join(where, ' and ')} order by id desc limit ${sql.value(filter.limit, 'int')}`, { scope }));
  return rows.map((row) => ({
    id: row.id, workflow: row.workflow, status: row.status, trigger: row.trigger, error: row.error,
    createdAt: row.created_at, finishedAt: row.finished_at,
  }));
}

/** Waiting job steps that `jobIds` resume. */
export async function stepsAwaiting(t: Tx, jobIds: readonly string[]): Promise<Array<{ runId: string; position: number; jobId: string; tenantId: string | null }>> {
  const rows = await t.manyOrNone(compile(sql`
    select s.run_id, s.position, s.job_id, r.tenant_id from svc_workflow_steps s join svc_workflow_runs r on r.id = s.run_id
      where s.job_id = any(${sql.value(jobIds, 'text[]')}) and s.status = 'waiting' and s.wake_at is null`));
  return rows.map((row) => ({ runId: row.run_id, position: row.position, jobId: row.job_id, tenantId: row.tenant_id }));
}
