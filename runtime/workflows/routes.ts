/**
 * The REST routes of CONTRACT section 12. Each needs a user JWT; a workflow
 * is open to Admins and, for a `manual` trigger, to its roles. Everything is
 * scoped to the caller's tenant (runtime/tenancy): a run of another tenant is
 * 404, like an unknown one.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { principalOf, requireUser, type Authenticator, type Principal } from '../auth/index.ts';
import { conflict, forbidden, invalidField, notFound } from '../http/errors.ts';
import { rejectTooDeep } from '../http/input.ts';
import type { WorkflowDef } from '../ir/types.ts';
import { requestScope } from '../tenancy/index.ts';
import { startRun, started } from './start.ts';
import { isoUtcSql } from '../db/index.ts';
import { listRuns, readRun, RUN_STATUSES, type RunState, type RunStatus } from './store.ts';
import type { EngineDeps } from './types.ts';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

/** Admin always; others only a manual workflow naming their role. */
export function mayUse(principal: Pick<Principal, 'role'>, workflow: WorkflowDef): boolean {
  if (principal.role === 'Admin') return true;
  return workflow.trigger.kind === 'manual' && workflow.trigger.roles.includes(principal.role);
}

function describe(workflow: WorkflowDef, nextAt: ReadonlyMap<string, string>) {
  const { trigger } = workflow;
  const described = trigger.kind === 'event'
    ? { kind: 'event', on: `${trigger.model}.${trigger.event}` }
    : trigger.kind === 'schedule'
      ? { kind: 'schedule', cron: trigger.cron, timezone: trigger.timezone, nextAt: nextAt.get(workflow.name) ?? null }
      : { kind: 'manual', roles: [...trigger.roles] };
  return {
    name: workflow.name, trigger: described,
    steps: workflow.steps.map((step) => ({ id: step.id, kind: step.kind })),
    onFailure: workflow.onFailure.kind,
  };
}

/** GET /workflows/runs/{id}: every step of the run's pinned definition, `pending` until it starts. */
export function runView(run: RunState) {
  return {
    id: run.id, workflow: run.workflow, status: run.status, trigger: run.trigger.kind,
    steps: run.definition.steps.map((step, position) => {
      const record = run.steps.get(position);
      return {
        id: step.id, kind: step.kind, status: record?.status ?? 'pending', attempts: record?.attempts ?? 0,
        output: record?.output ?? null, error: record?.error ?? null, startedAt: record?.startedAt ?? null, finishedAt: record?.finishedAt ?? null,
        // What a waiting step waits on: its job (a `job` step), or the time it wakes (a `delay`, a retry's backoff).
        jobId: record?.jobId ?? null, wakeAt: record?.wakeAt ?? null,
      };
    }),
    error: run.error, createdAt: run.createdAt, updatedAt: run.updatedAt, finishedAt: run.finishedAt,
  };
}

export function mountWorkflowRoutes(router: Router, auth: Authenticator, deps: EngineDeps, workflows: readonly WorkflowDef[]): void {
  const byName = new Map(workflows.map((w) => [w.name, w]));
  /** The workflows the caller may use; 403 when none. */
  const visible = (principal: Principal) => {
    const open = workflows.filter((w) => mayUse(principal, w));
    if (principal.role !== 'Admin' && open.length === 0) throw forbidden('no workflow is open to this role');
    return open;
  };

  router.get('/workflows', requireUser(auth), async (koa) => {
    const open = visible(await principalOf(koa, auth));
    const rows = await deps.db.manyOrNone<{ workflow: string; next_at: string }>(
      `select workflow, ${isoUtcSql('next_at')} as next_at from svc_workflow_schedules`,
    );
    const nextAt = new Map(rows.map((row) => [row.workflow, row.next_at]));
    koa.body = { items: open.map((w) => describe(w, nextAt)) };
  });

  router.get('/workflows/runs', requireUser(auth), async (koa) => {
    const principal = await principalOf(koa, auth);
    const scope = requestScope(koa, principal);
    const open = visible(principal).map((w) => w.name);
    const workflow = queryString(koa, 'workflow');
    if (workflow !== null && !open.includes(workflow)) throw invalidField('workflow', `${workflow} is not a workflow open to this caller`);
    const status = queryString(koa, 'status');
    if (status !== null && !(RUN_STATUSES as readonly string[]).includes(status)) {
      throw invalidField('status', `status must be one of ${RUN_STATUSES.join(', ')}`);
    }
    const limit = readLimit(queryString(koa, 'limit'));
    const items = await listRuns(deps.db, scope, {
      workflows: workflow === null ? open : [workflow], status: status as RunStatus | null, limit: limit + 1, before: queryString(koa, 'cursor'),
    });
    const more = items.length > limit;
    const page = more ? items.slice(0, limit) : items;
    koa.body = { items: page, nextCursor: more ? page[page.length - 1].id : null };
  });

  router.get('/workflows/runs/:id', requireUser(auth), async (koa) => {
    const principal = await principalOf(koa, auth);
    const run = await readRun(deps.db, koa.params.id, { scope: requestScope(koa, principal) });
    if (!run || !mayUse(principal, run.definition)) throw notFound('run not found');
    koa.body = runView(run);
  });

  router.post('/workflows/:name/run', requireUser(auth), async (koa) => {
    const principal = await principalOf(koa, auth);
    const scope = requestScope(koa, principal);
    const workflow = byName.get(koa.params.name);
    if (!workflow) throw notFound('workflow not found');
    if (!mayUse(principal, workflow)) throw forbidden(`not allowed to run ${workflow.name}`);
    if (workflow.trigger.kind === 'event') {
      throw conflict(`${workflow.name} starts on ${workflow.trigger.model}.${workflow.trigger.event} events, not by hand`);
    }
    const input = runInput(koa.request.body);
    const runId = await deps.db.tx('svc-workflow-manual', async (t) => {
      started(t, deps);
      return startRun(t, deps, {
        definition: workflow, tenantId: scope.tenantId, trigger: { kind: 'manual', input }, depth: 0,
        actor: { id: principal.userId, role: principal.role, tenantId: principal.tenantId }, request: deps.audit.requestOf(koa),
      });
    });
    koa.status = 202;
    koa.body = { runId };
  });
}

function queryString(koa: Koa.Context, name: string): string | null {
  const value = koa.query[name];
  if (value === undefined || value === '') return null;
  if (typeof value !== 'string') throw invalidField(name, `${name} must be given once`);
  return value;
}

/** 1..200, default 50; out of range clamped, not a number 400. */
function readLimit(raw: string | null): number {
  if (raw === null) return DEFAULT_LIMIT;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw invalidField('limit', 'limit must be a number');
  return Math.min(MAX_LIMIT, Math.max(1, Math.floor(value)));
}

/** `{input}`: an object (default `{}`) nested at most MAX_JSON_DEPTH deep; anything else names the field. */
function runInput(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0)) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalidField('body', 'body must be a JSON object {input}');
  const input = (body as Record<string, unknown>).input;
  if (input === undefined || input === null) return {};
  if (typeof input !== 'object' || Array.isArray(input)) throw invalidField('input', 'input must be a JSON object');
  rejectTooDeep(input, 'input');
  return input as Record<string, unknown>;
}
