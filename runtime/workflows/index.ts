/**
 * Workflows (CONTRACT section 12, ADR 015): durable runs of the steps the
 * schema declares, started by record events (in the write's transaction),
 * schedules (once per tick across instances) or people (`POST
 * /workflows/{name}/run`), and advanced by in-process runners on the job
 * queue's lease engine. Runs are pinned to the definition they started
 * with, so they finish even if the schema changes or drops the workflow.
 */
import { fileURLToPath } from 'node:url';
import type { Principal } from '../auth/index.ts';
import { AutomationDepth } from '../automation/index.ts';
import type { Db } from '../db/index.ts';
import { newId } from '../ids.ts';
import type { TenantScope } from '../tenancy/index.ts';
import { defineCapability, type ServiceContext } from '../core/index.ts';
import { awaitsConsumer } from './awaits.ts';
import { WORKFLOW_PATHS } from './openapi.ts';
import { mayUse, mountWorkflowRoutes } from './routes.ts';
import { Runners } from './runner.ts';
import { scheduledWorkflows, Scheduler, syncSchedules } from './schedule.ts';
import { readRun } from './store.ts';
import { eventTrigger } from './trigger.ts';
import { RUN_STREAM, type EngineDeps } from './types.ts';

export { ADVANCE_QUEUE, RUN_STREAM } from './types.ts';
export { render, evaluate, type RenderScope } from './render.ts';
export { allowedOrigin } from './http.ts';
export type { Transition } from './engine.ts';

/** Who may follow a run (its `workflow:{id}` channel, its history): who may use its workflow, in the run's tenant. */
async function mayFollowRun(db: Db, principal: Pick<Principal, 'role'>, scope: TenantScope, runId: string): Promise<boolean> {
  const run = await readRun(db, runId, { scope });
  return run !== null && mayUse(principal, run.definition);
}

function guardRunChannels(ctx: ServiceContext<'realtime'>): void {
  ctx.services.realtime?.guardChannels('workflow:', (principal, scope, channel) =>
    mayFollowRun(ctx.db, principal, scope, channel.slice('workflow:'.length)));
}

/** A run's transitions (GraphQL recordHistory, model `WorkflowRun`): for whoever may follow the run. */
function registerRunStream(ctx: ServiceContext<'streams'>): void {
  ctx.services.streams.register(RUN_STREAM, async ({ principal, scope }, id) =>
    principal !== null && mayFollowRun(ctx.db, principal, scope, id));
}

export const workflows = defineCapability({
  name: 'workflows',
  provides: [],
  requires: ['realtime', 'streams', 'jobs', 'records', 'events', 'audit', 'openapi', 'auth', 'feed'],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const { config, services } = ctx;
    let runners: Runners;
    const deps: EngineDeps = {
      db: ctx.db, jobs: services.jobs, records: services.records, events: services.events, audit: services.audit,
      realtime: services.realtime, log: ctx.log, config: config.workflows, due: (delaySecs) => runners.due(delaySecs),
    };
    runners = new Runners(deps, {
      workerId: `workflows:${newId()}`, concurrency: config.workflows.concurrency, leaseSecs: config.workflows.leaseSecs, pollMs: config.workflows.pollMs,
      httpPerOrigin: config.workflows.httpPerOrigin,
    });
    const declared = ctx.ir.workflows;
    // One depth rule for actions and workflows (runtime/automation): SVC_ACTION_MAX_DEPTH.
    const depth = new AutomationDepth(config.actions.maxDepth, { audit: services.audit, log: ctx.log });
    services.records.triggers.add(eventTrigger(deps, declared, services.records.deps.models, depth));
    services.openapi.add(WORKFLOW_PATHS);
    // The session-checking authenticator: the auth capability, which this one requires, provided it.
    mountWorkflowRoutes(ctx.router, { authenticate: (token) => services.auth.authenticate(token) }, deps, declared);
    guardRunChannels(ctx);
    registerRunStream(ctx);
    const scheduled = scheduledWorkflows(declared);
    await syncSchedules(ctx.db, scheduled);
    // Runs in flight finish even when the schema no longer declares any workflow: runners and awaits always run.
    const awaits = await services.feed.consume(awaitsConsumer(deps));
    const scheduler = new Scheduler(deps, scheduled);
    runners.start(services.feed);
    scheduler.start();
    return {
      async stop() {
        await scheduler.stop();
        await runners.stop();
        await awaits.stop();
      },
    };
  },
});
