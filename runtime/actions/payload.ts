/**
 * The payload of an action's job (CONTRACT section 11) and who it names:
 * the actor is stamped from the write or the call that caused the job, and a
 * worker's write-back acts as exactly that actor, in the job's tenant.
 */
import { ROLES, type RecordEvent, type Role } from '../ir/types.ts';
import type { Caller } from '../records/index.ts';
import type { Row } from '../records/index.ts';
import { SYSTEM_ACTOR, userActor } from '../audit/index.ts';
import type { Caller as JobCaller } from '../jobs/index.ts';

/** The queue every action's job goes to (kind = the action's name); reserved for this capability. */
export const ACTIONS_QUEUE = 'actions';

export interface ActionActor {
  /** Null only for a write made by the system itself (no user): such a job cannot write back. */
  readonly id: string | null;
  readonly role: Role | null;
  /** The tenant the actor acted in: the job's tenant. */
  readonly tenantId: string | null;
}

export interface ActionPayload {
  readonly action: string;
  readonly trigger: 'event' | 'direct' | 'workflow';
  readonly model: string | null;
  readonly event: RecordEvent | null;
  readonly eventId: string | null;
  readonly recordId: string | null;
  readonly tenantId: string | null;
  readonly input: unknown;
  readonly old: Row | null;
  readonly actor: ActionActor;
  readonly depth: number;
}

export function actorOf(caller: Caller): ActionActor {
  const principal = caller.principal;
  return { id: principal?.userId ?? null, role: principal?.role ?? null, tenantId: caller.scope.tenantId };
}

/** Who the jobs capability stamps on the job (created_by, tenant) and names in its `job.enqueue` entries. */
export function jobCallerOf(caller: Caller): JobCaller {
  const principal = caller.principal;
  return {
    actorId: principal?.userId ?? null,
    tenantId: caller.scope.tenantId,
    actor: principal ? userActor(principal) : SYSTEM_ACTOR,
    request: caller.request ?? null,
  };
}

/** The actor a stored payload names, when it is one a write-back can act as. */
export function storedActor(payload: unknown): { actor: { id: string; role: Role }; depth: number } | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const { actor, depth } = payload as { actor?: { id?: unknown; role?: unknown }; depth?: unknown };
  if (typeof actor?.id !== 'string' || !(ROLES as readonly unknown[]).includes(actor.role)) return null;
  if (typeof depth !== 'number' || !Number.isInteger(depth) || depth < 0) return null;
  return { actor: { id: actor.id, role: actor.role as Role }, depth };
}
