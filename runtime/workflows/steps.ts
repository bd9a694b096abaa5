/**
 * What each step kind does, held in a Record over the IR's kinds so a new
 * kind without a runner fails type-checking. A runner returns an Outcome;
 * the engine (engine.ts) stores it, and turns whatever a runner throws into
 * the step's failure. By `effect`: `none` computes from the run alone; `tx`
 * runs in a savepoint of the advance's transaction, so its effect (a
 * mutation, a job's enqueue) commits with the step record or not at all;
 * `outside` (http) prepares a request that the engine sends outside any
 * transaction and outside the runner that leased the advance.
 */
import type { Principal } from '../auth/index.ts';
import type { Tx } from '../db/index.ts';
import { SafeError } from '../http/errors.ts';
import type { WorkflowStep } from '../ir/types.ts';
import { RecordError, type Caller } from '../records/index.ts';
import { SystemScope, TenantScope } from '../tenancy/index.ts';
import { prepare, send } from './http.ts';
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
  /** A savepoint of the advance's transaction (runners with effect `tx`). */
  readonly t: Tx | null;
}

/** A request ready to send; its outcome once it has an answer (or none in time). */
export interface Request {
  readonly kind: 'request';
  readonly origin: string;
  readonly timeoutSecs: number;
  send(): Promise<Outcome>;
}

type StepRunner<S extends WorkflowStep> =
  | { readonly effect: 'none' | 'tx'; run(call: StepCall<S>): Promise<Outcome> }
  | { readonly effect: 'outside'; prepare(call: StepCall<S>): Outcome | Request };

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

/** A step's throw as its error: a refused input names its field; anything else says what it says. */
export function stepError(error: unknown): string {
  if (error instanceof RecordError || error instanceof SafeError) return error.field ? `${error.message} (${error.field})` : error.message;
  if (error instanceof TemplateError || error instanceof Error) return error.message;
  return String(error);
}

export const RUNNERS: Runners = {
  set: {
    effect: 'none',
    run: async ({ step, scope, attempts }) => {
      const values = render(step.values, scope) as Record<string, unknown>;
      return { kind: 'succeeded', attempts, output: { result: values }, vars: values };
    },
  },
  delay: {
    effect: 'none',
    run: async ({ step }) => ({ kind: 'delayed', seconds: step.seconds }),
  },
  mutation: {
    effect: 'tx',
    run: async ({ deps, run, step, scope, attempts, t }) => {
      const records = deps.records.within(t!);
      const caller = recordsCaller(run);
      const id = step.operation === 'create' ? '' : String(render(step.recordId, scope) ?? '');
      const data = render(step.data as never, scope);
      if (step.operation === 'create') return { kind: 'succeeded', attempts, output: { result: await records.create(caller, step.model, data) } };
      if (step.operation === 'update') return { kind: 'succeeded', attempts, output: { result: await records.update(caller, step.model, id, data) } };
      await records.delete(caller, step.model, id);
      return { kind: 'succeeded', attempts, output: { result: { id, deleted: true } } };
    },
  },
  job: {
    effect: 'tx',
    run: async ({ deps, run, step, scope, attempts, t }) => {
      const payload = render(step.payload, scope);
      // Idempotent per run, step and attempt: a replayed advance finds the job it already enqueued.
      const { id } = await deps.jobs.enqueueOne(t!, {
        queue: step.queue, kind: step.jobKind, payload: payload ?? {}, idempotencyKey: `wf:${run.id}:${step.id}:${attempts}`,
      }, { actorId: run.actor?.id ?? null, tenantId: run.tenantId, actor: auditActor(run.actor) });
      return step.await ? { kind: 'awaiting', attempts, jobId: id } : { kind: 'succeeded', attempts, output: { jobId: id }, jobId: id };
    },
  },
  http: {
    effect: 'outside',
    prepare: ({ deps, run, step, scope, attempts }) => {
      const prepared = prepare({
        method: step.method, url: String(render(step.url, scope)), headers: render(step.headers as never, scope) as Record<string, unknown>,
        body: render(step.body, scope), timeoutSecs: step.timeoutSecs, idempotencyKey: `${run.id}:${step.id}`,
      }, deps.config.httpAllow);
      if (!prepared.ok) return { kind: 'failed', attempts, error: prepared.error };
      const { request } = prepared;
      return {
        kind: 'request', origin: request.origin, timeoutSecs: step.timeoutSecs,
        send: async () => {
          const result = await send(request);
          if (result.ok) return { kind: 'succeeded', attempts, output: { status: result.status, result: result.body } };
          const output = result.status === undefined ? undefined : { status: result.status, result: result.body };
          return { kind: 'failed', attempts, error: result.error, output };
        },
      };
    },
  },
};

/** A job step's wait is over when its job succeeded or went dead; else nothing changes. */
export async function jobOutcome(deps: EngineDeps, jobId: string, attempts: number): Promise<Outcome> {
  const job = await deps.jobs.get(jobId, SystemScope.ALL);
  if (job?.status === 'succeeded') return { kind: 'succeeded', attempts, output: { jobId, result: job.result }, jobId };
  if (job?.status === 'dead' || job === null) {
    return { kind: 'failed', attempts, jobId, error: job ? `job ${jobId} failed: ${job.error ?? 'no error given'}` : `job ${jobId} is gone` };
  }
  return { kind: 'unchanged' };
}
