/**
 * The actions capability (CONTRACT section 11, docs/actions.md, ADR 014):
 *
 * - enqueue on write: a write trigger that puts the job of every matching
 *   binding on queue `actions` in the write's own transaction (trigger.ts);
 * - `POST /api/actions/{name}`: direct invocation, with `wait` answered from
 *   the change feed (invoke.ts);
 * - write-back: `ctx.services.actions.workerCaller`, which the graphql
 *   capability asks for a request carrying X-Worker-Token (writeback.ts).
 *
 * Needs records, jobs, feed and audit before it.
 */
import { AutomationDepth } from '../automation/index.ts';
import { defineCapability } from '../core/index.ts';
import { compileBindings } from './bindings.ts';
import { mountInvokeRoute } from './invoke.ts';
import { ACTION_PATHS } from './paths.ts';
import { ACTIONS_QUEUE } from './payload.ts';
import { actionTrigger } from './trigger.ts';
import { workerCaller, type WorkerCaller } from './writeback.ts';

export { ACTIONS_QUEUE, type ActionPayload, type ActionActor } from './payload.ts';
export { DEPTH_EXCEEDED } from '../automation/index.ts';
export type { WorkerCaller } from './writeback.ts';

export interface ActionsService {
  /** The caller of a worker's write-back GraphQL request, or null once it was refused and answered. */
  readonly workerCaller: WorkerCaller;
}

declare module '../core/capability.ts' {
  interface Services {
    actions: ActionsService;
  }
}

export const actions = defineCapability({
  name: 'actions',
  provides: ['actions'],
  requires: ['records', 'audit', 'jobs', 'auth', 'feed', 'events', 'openapi'],
  async init(ctx) {
    const { records, audit, auth, feed, jobs } = ctx.services;
    jobs.reserveQueue(ACTIONS_QUEUE, 'action jobs are enqueued by model writes and POST /api/actions/{name}');
    const bindings = compileBindings(ctx.ir, records.deps.models);
    if (bindings.size > 0) {
      const depth = new AutomationDepth(ctx.config.actions.maxDepth, { audit, log: ctx.log });
      records.triggers.add(actionTrigger({ bindings, jobs, depth }));
    }
    mountInvokeRoute(ctx.router, {
      db: ctx.db,
      actions: new Map(ctx.ir.actions.map((a) => [a.name, a])),
      input: { models: records.deps.models, validator: records.deps.validator },
      auth,
      jobs,
      feed,
      audit,
      events: ctx.services.events,
    });
    ctx.services.openapi.add(ACTION_PATHS);
    ctx.services.actions = { workerCaller: workerCaller({ jobs, audit }) };
  },
});
