/**
 * Automation depth (CONTRACT section 11): the one rule that stops loops of
 * automation, for action bindings and workflow triggers alike. A person's
 * write is depth 0; every write an action's write-back or a workflow's
 * mutation makes is its job's or run's depth + 1. A write at most
 * SVC_ACTION_MAX_DEPTH (default 3) deep may trigger more automation; a deeper
 * one triggers none, and each action or workflow it would have triggered is
 * logged and audited, in the write's transaction, as `action.invoke` or
 * `workflow.run` denied with `action_depth_exceeded`.
 */
import { SYSTEM_ACTOR, userActor, type AuditEntryInput, type AuditLog } from '../audit/index.ts';
import type { Tx } from '../db/index.ts';
import type { Logger } from '../log/index.ts';
import type { Caller, WrittenRecord } from '../records/index.ts';

/** The audited error of a write too deep to trigger automation. */
export const DEPTH_EXCEEDED = 'action_depth_exceeded';

/** Automated hops that led to the caller's write: 0 for a person's write. */
export const depthOf = (caller: Caller): number => caller.depth ?? 0;

/** What a too-deep write would have triggered: an action's job or a workflow's run. */
export interface Attempt {
  readonly kind: 'action' | 'workflow';
  /** The action's or the workflow's name. */
  readonly name: string;
  readonly write: WrittenRecord;
}

const AUDIT_ACTION = { action: 'action.invoke', workflow: 'workflow.run' } as const;

export class AutomationDepth {
  constructor(
    /** SVC_ACTION_MAX_DEPTH. */
    readonly maxDepth: number,
    private readonly deps: { readonly audit: AuditLog; readonly log: Logger },
  ) {}

  /** May the caller's write trigger more automation? */
  allows(caller: Caller): boolean {
    return depthOf(caller) <= this.maxDepth;
  }

  /** Records, in the write's transaction, what a write the rule refused would have triggered. */
  async refused(t: Tx, caller: Caller, attempts: readonly Attempt[]): Promise<void> {
    if (attempts.length === 0) return;
    const depth = depthOf(caller);
    this.deps.log.warn({ depth, maxDepth: this.maxDepth, triggered: attempts.map((a) => `${a.kind}:${a.name}`) },
      'automation not triggered: the write is deeper than SVC_ACTION_MAX_DEPTH');
    await this.deps.audit.record(t, attempts.map((attempt) => deniedEntry(caller, attempt, depth)));
  }
}

function deniedEntry(caller: Caller, { kind, name, write }: Attempt, depth: number): AuditEntryInput {
  return {
    action: AUDIT_ACTION[kind], outcome: 'denied', tenantId: caller.scope.tenantId,
    actor: caller.principal ? userActor(caller.principal) : SYSTEM_ACTOR,
    entityType: write.model, entityId: write.id, eventId: write.eventId,
    changes: { [kind]: name, error: DEPTH_EXCEEDED, depth },
    request: caller.request ?? null,
  };
}
