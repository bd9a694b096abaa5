/**
 * Cancel is `dead` (ADR 023): a cancelled job ends like any dead job for
 * everything that waits on one. A workflow step waiting for its job (the crm
 * fixture's wonDeal: the invoice step awaits a billing job) is released with
 * the job's error, `cancelled`, instead of waiting for ever; the job's
 * history records the end as `JobDead` by the operator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call } from '../jobs/helpers.ts';

let service: TestService;
let token: string;

const api = (method: string, path: string, body?: unknown) => call(service.url, method, path, { body, headers: { authorization: `Bearer ${token}` } });
const gql = async (query: string) => {
  const reply = await api('POST', '/graphql', { query });
  if (reply.body.errors) throw new Error(JSON.stringify(reply.body.errors));
  return reply.body.data;
};

beforeAll(async () => {
  service = await startTestService({ fixture: 'crm', env: { RATE_LIMIT_RPS: '100000' } });
  token = await service.token({ role: 'Admin', userId: 'root' });
}, 60_000);
afterAll(async () => {
  await service?.close();
});

interface Step { id: string; status: string; jobId?: string | null; error?: string | null }

describe('cancelling a job a workflow step waits on', () => {
  it('ends the wait: the step fails with the job\'s error "cancelled"; the history says JobDead by the operator', { timeout: 60_000 }, async () => {
    const company = (await gql('mutation { create(model: "Company", data: { name: "Cancel Co" }) }')).create;
    const deal = (await gql(`mutation { create(model: "Deal", data: { title: "To cancel", amount: 5, companyId: "${company.id}" }) }`)).create;
    await gql(`mutation { update(model: "Deal", id: "${deal.id}", data: { stage: "won" }) }`);
    const invoice = async (): Promise<{ runId: string; step: Step } | null> => {
      const runs = (await api('GET', '/workflows/runs?workflow=wonDeal')).body.items as Array<{ id: string }>;
      if (runs.length === 0) return null;
      const run = (await api('GET', `/workflows/runs/${runs[0].id}`)).body as { steps: Step[] };
      const step = run.steps.find((s) => s.id === 'invoice');
      return step ? { runId: runs[0].id, step } : null;
    };
    await expect.poll(async () => (await invoice())?.step.jobId ?? null, { timeout: 20_000 }).not.toBeNull();
    const { step: waiting } = (await invoice())!;
    const jobId = waiting.jobId!;
    const cancelled = await api('POST', `/jobs/${jobId}/cancel`);
    expect(cancelled.body).toMatchObject({ id: jobId, status: 'dead', error: 'cancelled' });
    await expect.poll(async () => JSON.stringify((await invoice())?.step), { timeout: 20_000 }).toMatch(/failed: cancelled/);
    const history = await api('POST', '/graphql', {
      query: 'query($id: ID!) { recordHistory(model: "Job", id: $id) { eventType actorId data } }', variables: { id: jobId },
    });
    expect(history.body.data.recordHistory.at(-1)).toMatchObject({ eventType: 'JobDead', actorId: 'root', data: { error: 'cancelled', cancelledBy: 'root' } });
  });
});
