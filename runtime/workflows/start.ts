/**
 * Starting a run, in the caller's transaction: the run row (pinned to the
 * definition it starts with), its first advance, the `WorkflowRunStarted`
 * event and the `workflow.run` audit entry commit together, with the write
 * that triggered it (event triggers), the tick that fired it (schedules) or
 * on their own (manual runs).
 */
import { newId } from '../ids.ts';
import { SYSTEM_ACTOR, type AuditActor, type AuditRequest } from '../audit/index.ts';
import { afterCommit, type Tx } from '../db/index.ts';
import type { WorkflowDef } from '../ir/types.ts';
import { insertRun, type RunActor, type TriggerData } from './store.ts';
import { ADVANCE_KIND, ADVANCE_MAX_ATTEMPTS, ADVANCE_QUEUE, RUN_ENTITY, RUN_STREAM, type AdvancePayload, type EngineDeps } from './types.ts';

export interface RunStart {
  readonly definition: WorkflowDef;
  readonly tenantId: string | null;
  readonly trigger: TriggerData;
  readonly actor: RunActor | null;
  readonly depth: number;
  readonly request?: AuditRequest | null;
  /** The triggering write's event: a second start for it is a no-op. */
  readonly eventId?: string | null;
  /** A schedule's tick: a second start for it is a no-op. */
  readonly scheduledFor?: string | null;
}

export function auditActor(actor: RunActor | null): AuditActor {
  return actor ? { kind: 'user', id: actor.id, role: actor.role } : SYSTEM_ACTOR;
}

/** The run's id; null when its event or tick had already started it. */
export async function startRun(t: Tx, deps: Pick<EngineDeps, 'jobs' | 'events' | 'audit'>, start: RunStart): Promise<string | null> {
  const id = newId();
  const inserted = await insertRun(t, {
    id, definition: start.definition, tenantId: start.tenantId, trigger: start.trigger, actor: start.actor,
    depth: start.depth, eventId: start.eventId ?? null, scheduledFor: start.scheduledFor ?? null,
  });
  if (!inserted) return null;
  await enqueueAdvance(t, deps, { id, tenantId: start.tenantId }, 0, 'start', 0);
  const { eventId } = await deps.events.append(t, {
    streamType: RUN_STREAM, streamId: id, eventType: 'WorkflowRunStarted',
    data: { workflow: start.definition.name, trigger: start.trigger.kind, status: 'running' },
    actorId: start.actor?.id ?? null, tenantId: start.tenantId,
  });
  await deps.audit.record(t, {
    action: 'workflow.run', tenantId: start.tenantId, actor: auditActor(start.actor), entityType: RUN_ENTITY, entityId: id, eventId,
    changes: { workflow: start.definition.name, trigger: start.trigger.kind, status: 'running' }, request: start.request ?? null,
  });
  return id;
}

/** Once `t` commits with a run started in it: wakes the local feed reader and runners. */
export function started(t: Tx, deps: Pick<EngineDeps, 'events' | 'due'>): void {
  afterCommit(t, () => {
    deps.events.committed();
    deps.due(0);
  });
}

/**
 * The advance that looks at step `position` after `delaySecs`. `reason`
 * makes its idempotency key: the same transition never enqueues twice.
 */
export async function enqueueAdvance(
  t: Tx, deps: Pick<EngineDeps, 'jobs'>, run: { id: string; tenantId: string | null }, position: number, reason: string, delaySecs: number,
): Promise<void> {
  const payload: AdvancePayload = { runId: run.id, position };
  await deps.jobs.enqueueOne(t, {
    queue: ADVANCE_QUEUE, kind: ADVANCE_KIND, payload, idempotencyKey: `${run.id}:${position}:${reason}`, maxAttempts: ADVANCE_MAX_ATTEMPTS,
  }, { actorId: null, tenantId: run.tenantId }, { internal: true, delaySecs });
}
