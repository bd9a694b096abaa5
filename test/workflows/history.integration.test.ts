/**
 * Runtime streams have history (item 9 of issue 26, CONTRACT section 12): a
 * workflow run's transitions and a job's are in the event log, and GraphQL
 * `recordHistory(model: "WorkflowRun" | "Job", id)` lists them, oldest first,
 * to whoever may follow the run (Admin, or the roles of its manual trigger)
 * or the job (who enqueued it, or an Admin), in their tenant only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call, watchRun } from './helpers.ts';

const GUARDED = `${import.meta.dirname}/fixtures/guarded/schema.ts`;
const HISTORY = 'query($model: String!, $id: ID!) { recordHistory(model: $model, id: $id) { eventId eventType version data actorId occurredAt } }';

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ fixture: GUARDED, env: { SVC_WORKFLOW_POLL_MS: '200', RATE_LIMIT_RPS: '100000' } });
});
afterAll(async () => {
  await service?.close();
});

const token = (role: 'Admin' | 'Manager' | 'Viewer', userId: string, tenantId: string | null = null) => service.token({ role, userId, tenantId });

async function historyOf(bearer: string, model: string, id: string): Promise<{ events: any[] | null; errors: any[] | undefined }> {
  const { body } = await call(service.url, 'POST', '/graphql', bearer, { query: HISTORY, variables: { model, id } });
  return { events: body.data?.recordHistory ?? null, errors: body.errors };
}

describe('recordHistory(model: "WorkflowRun")', () => {
  it('lists a run\'s transitions in order to those who may follow it, and to no one of another tenant', async () => {
    const manager = await token('Manager', 'mgr-a', 'tenant-a');
    const { body } = await call(service.url, 'POST', '/workflows/intake/run', manager, { input: { n: 1 } });
    const runId = body.runId;
    expect((await watchRun(service.url, manager, runId)).status).toBe('succeeded');

    const { events, errors } = await historyOf(manager, 'WorkflowRun', runId);
    expect(errors).toBeUndefined();
    expect(events!.map((e) => e.version)).toEqual(events!.map((_, i) => i + 1));
    expect(events![0]).toMatchObject({ eventType: 'WorkflowRunStarted', actorId: 'mgr-a', data: { workflow: 'intake', status: 'running' } });
    expect(events!.at(-1)).toMatchObject({ eventType: 'WorkflowRunSucceeded' });
    const succeeded = events!.filter((e) => e.eventType === 'WorkflowStepSucceeded').map((e) => e.data.step);
    expect(succeeded).toEqual(['got', 'done']);
    for (const e of events!) expect(e.occurredAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    // An Admin of the tenant reads the same history.
    const admin = await token('Admin', 'root-a', 'tenant-a');
    expect((await historyOf(admin, 'WorkflowRun', runId)).events).toEqual(events);
    // Another tenant's Manager, and a role the workflow does not open to, get none.
    for (const other of [await token('Manager', 'mgr-b', 'tenant-b'), await token('Viewer', 'viewer-a', 'tenant-a')]) {
      const refused = await historyOf(other, 'WorkflowRun', runId);
      expect(refused.events).toBeNull();
      expect(refused.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
  });
});

describe('recordHistory(model: "Job")', () => {
  it('lists a job\'s transitions to who enqueued it and to an Admin of its tenant, to no one else', async () => {
    const owner = await token('Manager', 'mgr-j', 'tenant-a');
    const { body } = await call(service.url, 'POST', '/jobs', owner, { queue: 'work', kind: 'k', payload: { n: 1 } });
    const jobId = body.id;

    const { events, errors } = await historyOf(owner, 'Job', jobId);
    expect(errors).toBeUndefined();
    expect(events).toEqual([expect.objectContaining({ eventType: 'JobEnqueued', version: 1 })]);
    expect((await historyOf(await token('Admin', 'root-a', 'tenant-a'), 'Job', jobId)).events).toEqual(events);
    for (const other of [await token('Manager', 'mgr-k', 'tenant-a'), await token('Admin', 'root-b', 'tenant-b')]) {
      expect((await historyOf(other, 'Job', jobId)).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
  });
});
