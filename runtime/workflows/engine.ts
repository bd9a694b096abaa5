/**
 * One advance: a leased job of the internal queue that looks at one step of
 * one run, runs it, and stores its outcome with the next advance in ONE
 * transaction that also completes the leased job (ADR 015):
 *
 *   lock run -> (mutation / job enqueue / set) -> step record -> run row
 *   -> next advance (now, or after a delay or a retry backoff) -> events
 *   -> complete this advance (lease checked: a stale holder rolls back)
 *
 * A crash before that commit leaves the advance leased; its lease lapses,
 * the reclaim sweep queues it again and the step runs again, as if never
 * started. After the commit the step is finished and never runs again.
 * Only `http` does its work outside the transaction (at least once), and
 * outside the runner: the advance hands its request back to the runner as a
 * task that holds the lease, not a runner slot, and commits when it ends.
 *
 * Whatever a step throws while it is prepared or run is that step's failure
 * (attempt()), under the run's onFailure; only the engine's own statements,
 * and a database that cannot serve now, fail the advance itself.
 */
import { afterCommit, type Tx } from '../db/index.ts';
import { retryDelaySecs, type LeasedJob } from '../jobs/index.ts';
import type { WorkflowStep } from '../ir/types.ts';
import { SystemScope } from '../tenancy/index.ts';
import { evaluate, type RenderScope } from './render.ts';
import { auditActor, enqueueAdvance } from './start.ts';
import type { OriginSlots } from './http.ts';
import { jobOutcome, RUNNERS, stepError, type Outcome, type Request, type StepCall } from './steps.ts';
import { readRun, writeRun, writeStep, type RunState, type RunStatus, type StepStatus } from './store.ts';
import { RUN_ENTITY, RUN_STREAM, type AdvancePayload, type EngineDeps } from './types.ts';

/** The advance's lease was lost (another runner holds it now): its transaction rolls back. */
class StaleLease extends Error {}

/** Published on `workflow:{runId}` after each committed transition. */
export interface Transition {
  readonly runId: string;
  readonly workflow: string;
  readonly status: RunStatus;
  readonly step: { readonly id: string; readonly position: number; readonly status: StepStatus; readonly attempts: number; readonly error: string | null } | null;
  readonly error: string | null;
}

export function scopeOf(run: RunState): RenderScope {
  const steps: Record<string, unknown> = {};
  for (const record of run.steps.values()) if (record.output !== null) steps[record.stepId] = record.output;
  return { trigger: { ...run.trigger, actor: run.actor }, steps, vars: run.vars };
}

const finished = (run: RunState) => run.status === 'succeeded' || run.status === 'failed';

/** An http request the advance started: it holds the advance's lease until `done` has committed its outcome. */
export interface InFlight {
  readonly done: Promise<void>;
}

/** Seconds an http step whose origin has no free slot waits, as a queued advance, before it is looked at again. */
export const HELD_SECS = 1;

/**
 * SQLSTATE classes of a database that cannot serve now (connection, serialisation
 * failure or deadlock, resources, operator intervention): the advance is retried,
 * the step is not failed.
 */
const TRANSIENT_SQLSTATE = /^(08|40|53|57)/;

function transient(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5 && TRANSIENT_SQLSTATE.test(code);
}

/** The one place a step's throw (rendering, a refused input, a bad URL or header, a serialisation) becomes its failure. */
export async function attempt<T>(
  deps: Pick<EngineDeps, 'log'>, run: Pick<RunState, 'id'>, step: Pick<WorkflowStep, 'id'>, attempts: number, work: () => Promise<T>,
): Promise<T | Outcome> {
  try {
    return await work();
  } catch (error) {
    if (transient(error)) throw error;
    deps.log.debug({ err: error, runId: run.id, step: step.id }, 'workflow step threw: recorded as its failure');
    return { kind: 'failed', attempts, error: stepError(error) };
  }
}

/** Resolves once the advance's runner slot may be freed; an http request still in flight comes back as an InFlight. */
export async function advance(deps: EngineDeps, job: LeasedJob, slots: OriginSlots): Promise<InFlight | null> {
  const { runId, position } = job.payload as AdvancePayload;
  const run = await readRun(deps.db, runId, { scope: SystemScope.ALL });
  const step = run?.definition.steps[position];
  if (!run || !step || finished(run) || run.position !== position) {
    await commit(deps, job, runId, position, async () => ({ kind: 'unchanged' }));
    return null;
  }
  const record = run.steps.get(position);
  if (record?.status === 'waiting' && step.kind === 'delay') {
    await commit(deps, job, runId, position, async () => ({ kind: 'succeeded', attempts: 1, output: { result: { seconds: step.seconds } } }));
    return null;
  }
  if (record?.status === 'waiting' && step.kind === 'job' && record.jobId && record.wakeAt === null) {
    const outcome = await jobOutcome(deps, record.jobId, record.attempts);
    await commit(deps, job, runId, position, async () => outcome);
    return null;
  }
  // First look: the step's `if` decides; a retry or a replay already passed it.
  if (!record && step.if && !safeEvaluate(step, scopeOf(run))) {
    await commit(deps, job, runId, position, async () => ({ kind: 'skipped' }));
    return null;
  }
  const attempts = (record?.attempts ?? 0) + 1;
  const runner = RUNNERS[step.kind] as StepRunner;
  if (runner.effect !== 'outside') {
    const inTx = runner;
    await commit(deps, job, runId, position, (t, locked) => attempt(deps, locked, step, attempts, () => {
      const call = { deps, run: locked, step, attempts, scope: scopeOf(locked), t: null };
      // In a savepoint: a step that throws after a failed statement leaves the advance's transaction usable to record it.
      return inTx.effect === 'tx' ? t.tx('svc-workflow-step', (sp) => inTx.run({ ...call, t: sp })) : inTx.run(call);
    }));
    return null;
  }
  const outside = runner;
  const prepared = await attempt(deps, run, step, attempts, async () => outside.prepare({ deps, run, step, attempts, scope: scopeOf(run), t: null }));
  if (prepared.kind !== 'request') {
    await commit(deps, job, runId, position, async () => prepared);
    return null;
  }
  return request(deps, job, run, step, attempts, prepared, slots);
}

/** A step runner of any kind, as the engine calls it. */
type StepRunner =
  | { readonly effect: 'none' | 'tx'; run(call: StepCall): Promise<Outcome> }
  | { readonly effect: 'outside'; prepare(call: StepCall): Outcome | Request };

/**
 * An http request: waits in the queue while its origin has no free slot;
 * else counts the attempt, keeps the lease for the request's length, and
 * hands the request back as a task that commits its outcome when it ends.
 */
async function request(deps: EngineDeps, job: LeasedJob, run: RunState, step: WorkflowStep, attempts: number, prepared: Request, slots: OriginSlots): Promise<InFlight | null> {
  const release = slots.take(prepared.origin);
  if (!release) {
    await hold(deps, job, run.id, run.position);
    return null;
  }
  try {
    if (!(await markStarted(deps, run, step, attempts))) {
      release();
      await commit(deps, job, run.id, run.position, async () => ({ kind: 'unchanged' }));
      return null;
    }
    await deps.jobs.internal.extend(job.id, job.leaseId, deps.config.leaseSecs + prepared.timeoutSecs);
  } catch (error) {
    release();
    throw error;
  }
  const sent = attempt(deps, run, step, attempts, () => prepared.send()).finally(release);
  return { done: sent.then((outcome) => commit(deps, job, run.id, run.position, async () => outcome)) };
}

/** The origin is busy: this advance ends and a new one for the same step is queued HELD_SECS later, in one transaction. */
async function hold(deps: EngineDeps, job: LeasedJob, runId: string, position: number): Promise<void> {
  await commit(deps, job, runId, position, async (t, run) => {
    await enqueueAdvance(t, deps, run, position, `held:${job.id}`, HELD_SECS);
    afterCommit(t, () => deps.due(HELD_SECS));
    return { kind: 'unchanged' };
  });
}

/** An `if` that cannot be evaluated (a bad operator in a hand-edited snapshot) is false, never true. */
function safeEvaluate(step: WorkflowStep, scope: RenderScope): boolean {
  try {
    return evaluate(step.if!, scope);
  } catch {
    return false;
  }
}

/** Counts an attempt of a step that works outside the advance's transaction; false when the run moved on meanwhile. */
async function markStarted(deps: EngineDeps, run: RunState, step: WorkflowStep, attempts: number): Promise<boolean> {
  return deps.db.tx('svc-workflow-step-start', async (t) => {
    const locked = await readRun(t, run.id, { scope: SystemScope.ALL, lock: true });
    if (!locked || locked.position !== run.position || finished(locked)) return false;
    await writeStep(t, run.id, { position: run.position, stepId: step.id, status: 'running', attempts, output: null, error: null, jobId: null, wakeInSecs: null });
    await deps.events.append(t, stepEvent(locked, 'WorkflowStepStarted', step, 'running', attempts, null));
    afterCommit(t, () => deps.events.committed());
    return true;
  });
}

type Work = (t: Tx, run: RunState) => Promise<Outcome>;

/** Locks the run, checks it still stands at `position`, runs `work`, stores its outcome and completes the advance. */
async function commit(deps: EngineDeps, job: LeasedJob, runId: string, position: number, work: Work): Promise<void> {
  try {
    await deps.db.tx('svc-workflow-advance', async (t) => {
      afterCommit(t, () => deps.events.committed());
      const run = await readRun(t, runId, { scope: SystemScope.ALL, lock: true });
      if (run && !finished(run) && run.position === position) {
        const { transition, dueIn } = await apply(t, deps, run, position, await work(t, run));
        afterCommit(t, () => {
          if (dueIn !== null) deps.due(dueIn);
          if (transition) publish(deps, run.tenantId, transition);
        });
      }
      if (!(await deps.jobs.internal.completeIn(t, job.id, job.leaseId))) throw new StaleLease();
    });
  } catch (error) {
    if (error instanceof StaleLease) return; // the runner now holding the advance finishes it
    throw error;
  }
}

/** Best effort: the transition is committed (and in the event log) whether or not a subscriber hears of it. */
export function publish(deps: Pick<EngineDeps, 'realtime' | 'log'>, tenantId: string | null, transition: Transition): void {
  deps.realtime?.publish(tenantId, `workflow:${transition.runId}`, transition)
    .catch((err) => deps.log.warn({ err, runId: transition.runId }, 'workflow progress publish failed'));
}

interface Applied {
  readonly transition: Transition | null;
  /** Seconds until the advance enqueued by this transition is due; null: none enqueued. */
  readonly dueIn: number | null;
}

function stepEvent(run: RunState, type: string, step: WorkflowStep, status: StepStatus, attempts: number, error: string | null) {
  return {
    streamType: RUN_STREAM, streamId: run.id, eventType: type,
    data: { workflow: run.workflow, step: step.id, position: run.position, status, attempts, ...(error === null ? {} : { error }) },
    actorId: run.actor?.id ?? null, tenantId: run.tenantId,
  };
}

/** Stores an outcome: the step record, the run row, the next advance, events, and the audit entry of a finished run. */
async function apply(t: Tx, deps: EngineDeps, run: RunState, position: number, outcome: Outcome): Promise<Applied> {
  const step = run.definition.steps[position];
  const record = run.steps.get(position);
  const write = (status: StepStatus, fields: { attempts: number; output?: unknown; error?: string | null; jobId?: string | null; wakeInSecs?: number | null }) =>
    writeStep(t, run.id, {
      position, stepId: step.id, status, attempts: fields.attempts, output: fields.output ?? null, error: fields.error ?? null,
      jobId: fields.jobId ?? record?.jobId ?? null, wakeInSecs: fields.wakeInSecs ?? null,
    });
  const event = (type: string, status: StepStatus, attempts: number, error: string | null = null) =>
    deps.events.append(t, stepEvent(run, type, step, status, attempts, error));
  const made = (status: RunStatus, stepStatus: StepStatus, attempts: number, error: string | null, dueIn: number | null, runError: string | null = null): Applied => ({
    transition: { runId: run.id, workflow: run.workflow, status, step: { id: step.id, position, status: stepStatus, attempts, error }, error: runError },
    dueIn,
  });
  switch (outcome.kind) {
    case 'unchanged':
      return { transition: null, dueIn: null };
    case 'skipped': {
      await write('skipped', { attempts: record?.attempts ?? 0 });
      await event('WorkflowStepSkipped', 'skipped', record?.attempts ?? 0);
      return next(t, deps, run, position, run.vars, made('running', 'skipped', record?.attempts ?? 0, null, null));
    }
    case 'succeeded': {
      await write('succeeded', { attempts: outcome.attempts, output: outcome.output, jobId: outcome.jobId });
      await event('WorkflowStepSucceeded', 'succeeded', outcome.attempts);
      const vars = outcome.vars ? { ...run.vars, ...outcome.vars } : run.vars;
      return next(t, deps, run, position, vars, made('running', 'succeeded', outcome.attempts, null, null));
    }
    case 'delayed': {
      await write('waiting', { attempts: 1, wakeInSecs: outcome.seconds });
      await event('WorkflowStepWaiting', 'waiting', 1);
      await writeRun(t, run.id, { status: 'waiting', position, vars: run.vars, error: null });
      await enqueueAdvance(t, deps, run, position, 'wake', outcome.seconds);
      return made('waiting', 'waiting', 1, null, outcome.seconds);
    }
    case 'awaiting': {
      await write('waiting', { attempts: outcome.attempts, jobId: outcome.jobId });
      await event('WorkflowStepWaiting', 'waiting', outcome.attempts);
      await writeRun(t, run.id, { status: 'waiting', position, vars: run.vars, error: null });
      return made('waiting', 'waiting', outcome.attempts, null, null);
    }
    case 'failed':
      return failed(t, deps, run, position, outcome, { write, event, made });
  }
}

interface Writers {
  write(status: StepStatus, fields: { attempts: number; output?: unknown; error?: string | null; jobId?: string | null; wakeInSecs?: number | null }): Promise<void>;
  event(type: string, status: StepStatus, attempts: number, error?: string | null): Promise<unknown>;
  made(status: RunStatus, stepStatus: StepStatus, attempts: number, error: string | null, dueIn: number | null, runError?: string | null): Applied;
}

/** onFailure: retry after a backoff while attempts remain, else continue with the next step or stop the run. */
async function failed(t: Tx, deps: EngineDeps, run: RunState, position: number, outcome: Extract<Outcome, { kind: 'failed' }>, w: Writers): Promise<Applied> {
  const policy = run.definition.onFailure;
  const { attempts, error } = outcome;
  if (policy.kind === 'retry' && attempts < policy.maxAttempts) {
    const delay = await retryDelaySecs(t, attempts);
    await w.write('waiting', { attempts, error, output: outcome.output, jobId: outcome.jobId, wakeInSecs: delay });
    await w.event('WorkflowStepRetryScheduled', 'waiting', attempts, error);
    await writeRun(t, run.id, { status: 'waiting', position, vars: run.vars, error: null });
    await enqueueAdvance(t, deps, run, position, `retry${attempts}`, delay);
    return w.made('waiting', 'waiting', attempts, error, delay);
  }
  await w.write('failed', { attempts, error, output: outcome.output, jobId: outcome.jobId });
  await w.event('WorkflowStepFailed', 'failed', attempts, error);
  if (policy.kind === 'continue') return next(t, deps, run, position, run.vars, w.made('running', 'failed', attempts, error, null));
  const runError = `step ${run.definition.steps[position].id}: ${error}`;
  await finish(t, deps, run, position, run.vars, 'failed', runError);
  return w.made('failed', 'failed', attempts, error, null, runError);
}

/** The step is done: the run moves on to the next step, or ends succeeded after the last. */
async function next(t: Tx, deps: EngineDeps, run: RunState, position: number, vars: Record<string, unknown>, applied: Applied): Promise<Applied> {
  const following = position + 1;
  if (following >= run.definition.steps.length) {
    await finish(t, deps, run, following, vars, 'succeeded', null);
    return { ...applied, transition: applied.transition && { ...applied.transition, status: 'succeeded' } };
  }
  await writeRun(t, run.id, { status: 'running', position: following, vars, error: null });
  await enqueueAdvance(t, deps, run, following, 'start', 0);
  return { ...applied, dueIn: 0 };
}

async function finish(t: Tx, deps: EngineDeps, run: RunState, position: number, vars: Record<string, unknown>, status: 'succeeded' | 'failed', error: string | null) {
  await writeRun(t, run.id, { status, position, vars, error });
  const { eventId } = await deps.events.append(t, {
    streamType: RUN_STREAM, streamId: run.id, eventType: status === 'succeeded' ? 'WorkflowRunSucceeded' : 'WorkflowRunFailed',
    data: { workflow: run.workflow, status, ...(error === null ? {} : { error }) }, actorId: run.actor?.id ?? null, tenantId: run.tenantId,
  });
  await deps.audit.record(t, {
    action: 'workflow.run', tenantId: run.tenantId, actor: auditActor(run.actor), entityType: RUN_ENTITY, entityId: run.id, eventId,
    outcome: status === 'succeeded' ? 'success' : 'error', changes: { workflow: run.workflow, status, ...(error === null ? {} : { error }) },
  });
}
