/**
 * What each step kind does, held in a Record over the IR's kinds so a new
 * kind without a runner fails type-checking. A runner returns an Outcome;
 * the engine (engine.ts) stores it. Runners marked `inTx` run inside the
 * advance's transaction, so their effect (a mutation, a job's enqueue)
 * commits with the step record or not at all; `http` runs outside it.
 */
import type { Principal } from '../auth/index.ts';
import type { Tx } from '../db/index.ts';
import { SafeError } from '../http/errors.ts';
import type { WorkflowStep } from '../ir/types.ts';
import { RecordError, type Caller } from '../records/index.ts';
import { TenantScope } from '../tenancy/index.ts';
import { send } from './http.ts';
import { render, TemplateError, type RenderScope } from './render.ts';
import { auditActor } from './start.ts';
import type { RunState } from './store.ts';
import type { EngineDeps } from './types.ts';

export type Outcome =
  | { readonly kind: 'succeeded'; readonly attempts: number; readonly output: unknown; readonly vars?: Record<string, unknown>; readonly jobId?: string }
  | { readonly kind: 'skipped' }
  | { readonly kind: 'failed'; readonly attempts: number; readonly error: string; readonly output?: unknown; readonly jobId?: string }
  /** A delay starts: look again in `seconds`. */
  | { readonly kind: 'delayed'; readonly seconds: number }
  /** A job step waits for its job's outcome (the awaits consumer resumes it). */
  | { readonly kind: 'awaiting'; readonly attempts: number; readonly jobId: string }
  /** Nothing to record (an advance that found nothing to do). */
  | { readonly kind: 'unchanged' };

export interface StepCall<S extends WorkflowStep = WorkflowStep> {
  readonly deps: EngineDeps;
  readonly run: RunState;
  readonly step: S;
  /** This attempt's number (1 for the first). */
  readonly attempts: number;
  readonly scope: RenderScope;
  /** The advance's transaction (runners with `inTx`). */
  readonly t: Tx | null;
}

interface StepRunner<S extends WorkflowStep> {
  readonly inTx: boolean;
  run(call: StepCall<S>): Promise<Outcome>;
}

type Runners = { readonly [K in WorkflowStep['kind']]: StepRunner<Extract<WorkflowStep, { kind: K }>> };

/**
 * The principal a run's mutations act as: its actor (with that actor's
 * permissions); a scheduled run, which nobody caused, acts as the system
 * with Admin rights in the global scope; an anonymous write's run as nobody
 * (public access only).
 */
export function runPrincipal(run: RunState): Principal | null {
  if (run.trigger.kind === 'schedule') return { userId: `workflow:${run.workflow}`, role: 'Admin', tenantId: null, sessionId: null, email: null };
  if (!run.actor) return null;
  return { userId: run.actor.id, role: run.actor.role as Principal['role'], tenantId: run.actor.tenantId, sessionId: null, email: null };
}

function recordsCaller(run: RunState): Caller {
  return { principal: runPrincipal(run), scope: TenantScope.of(run.tenantId), depth: run.depth + 1 };
}

/** A refused input (validation, access, not found): the step fails. Anything else is an engine fault and is thrown. */
function stepError(error: unknown): string | null {
  if (error instanceof RecordError || error instanceof SafeError) return error.field ? `${error.message} (${error.field})` : error.message;
  if (error instanceof TemplateError) return error.message;
  return null;
}

async function failing(attempts: number, work: () => Promise<Outcome>): Promise<Outcome> {
  try {
    return await work();
  } catch (error) {
    const message = stepError(error);
    if (message === null) throw error;
    return { kind: 'failed', attempts, error: message };
  }
}

export const RUNNERS: Runners = {
  set: {
    inTx: true,
    run: async ({ step, scope, attempts }) => failing(attempts, async () => {
      const values = render(step.values, scope) as Record<string, unknown>;
      return { kind: 'succeeded', attempts, output: { result: values }, vars: values };
    }),
  },
  delay: {
    inTx: true,
    run: async ({ step }) => ({ kind: 'delayed', seconds: step.seconds }),
  },
  mutation: {
    inTx: true,
    run: async ({ deps, run, step, scope, attempts, t }) => failing(attempts, async () => {
      const records = deps.records.within(t!);
      const caller = recordsCaller(run);
      const id = step.operation === 'create' ? '' : String(render(step.recordId, scope) ?? '');
      const data = render(step.data as never, scope);
      if (step.operation === 'create') return { kind: 'succeeded', attempts, output: { result: await records.create(caller, step.model, data) } };
      if (step.operation === 'update') return { kind: 'succeeded', attempts, output: { result: await records.update(caller, step.model, id, data) } };
      await records.delete(caller, step.model, id);
      return { kind: 'succeeded', attempts, output: { result: { id, deleted: true } } };
    }),
  },
  job: {
    inTx: true,
    run: async ({ deps, run, step, scope, attempts, t }) => failing(attempts, async () => {
      const payload = render(step.payload, scope);
      // Idempotent per run, step and attempt: a replayed advance finds the job it already enqueued.
      const { id } = await deps.jobs.enqueueOne(t!, {
        queue: step.queue, kind: step.jobKind, payload: payload ?? {}, idempotencyKey: `wf:${run.id}:${step.id}:${attempts}`,
      }, { actorId: run.actor?.id ?? null, tenantId: run.tenantId, actor: auditActor(run.actor) });
      return step.await ? { kind: 'awaiting', attempts, jobId: id } : { kind: 'succeeded', attempts, output: { jobId: id }, jobId: id };
    }),
  },
  http: {
    inTx: false,
    run: async ({ deps, run, step, scope, attempts }) => failing(attempts, async () => {
      const result = await send({
        method: step.method, url: String(render(step.url, scope)), headers: render(step.headers as never, scope) as Record<string, unknown>,
        body: render(step.body, scope), timeoutSecs: step.timeoutSecs, idempotencyKey: `${run.id}:${step.id}`,
      }, deps.config.httpAllow);
      if (result.ok) return { kind: 'succeeded', attempts, output: { status: result.status, result: result.body } };
      const output = result.status === undefined ? undefined : { status: result.status, result: result.body };
      return { kind: 'failed', attempts, error: result.error, output };
    }),
  },
};

/** A job step's wait is over when its job succeeded or went dead; else nothing changes. */
export async function jobOutcome(deps: EngineDeps, jobId: string, attempts: number): Promise<Outcome> {
  const job = await deps.jobs.get(jobId);
  if (job?.status === 'succeeded') return { kind: 'succeeded', attempts, output: { jobId, result: job.result }, jobId };
  if (job?.status === 'dead' || job === null) {
    return { kind: 'failed', attempts, jobId, error: job ? `job ${jobId} failed: ${job.error ?? 'no error given'}` : `job ${jobId} is gone` };
  }
  return { kind: 'unchanged' };
}
