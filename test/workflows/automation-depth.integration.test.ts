/**
 * One automation depth rule (runtime/automation/depth.ts): a chain of
 * actions (each job's write-back triggers the next) and a chain of workflow
 * runs (each run's mutation triggers the next) stop at the same depth,
 * SVC_ACTION_MAX_DEPTH (default 3): automation at depths 0 to 3 happens, the
 * write at depth 4 triggers none, and each refused trigger is audited the
 * same way, denied with `action_depth_exceeded`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { waitFor } from '../jobs/helpers.ts';
import { post } from '../records/helpers.ts';
import { actionJobs, CREATE, rest, userOf, workerToken, type User } from '../actions/helpers.ts';

const DEPTH = `${import.meta.dirname}/fixtures/depth/schema.ts`;

let service: TestService;
let sales: User;
let token: string;

beforeAll(async () => {
  service = await startTestService({ fixture: DEPTH, env: { RATE_LIMIT_RPS: '100000' } });
  sales = await userOf(service, 'Sales', 'sally', 'acme');
  token = await workerToken(service, (await userOf(service, 'Admin', 'root')).token, 'acme');
});
afterAll(async () => {
  await service?.close();
});

const deniedEntries = (action: string) => service.ctx.db.any(
  `select entity_type, changes, tenant_id, actor_id from svc_audit where action = $1 and outcome = 'denied' order by id`, [action]);

async function createLink(data: object): Promise<any> {
  const r = await sales.gql(CREATE, { model: 'Link', data });
  if (!r.data?.create) throw new Error(JSON.stringify(r.body));
  return r.data.create;
}

/** Works the action chain as its worker would: each job's write-back creates the next link. */
async function relayUntilNoJob(): Promise<number[]> {
  const depths: number[] = [];
  for (;;) {
    const reply = await rest(service.url, 'POST', '/jobs/lease', {
      body: { queues: ['actions'], capacity: 1, visibilitySecs: 60 }, headers: { 'x-worker-token': token },
    });
    const [job] = reply.body.jobs;
    if (!job) return depths;
    depths.push(job.payload.depth);
    const next = await post(service.url, { query: CREATE, variables: { model: 'Link', data: { n: job.payload.input.n + 1, via: 'action' } } },
      { 'x-worker-token': token, 'x-job-id': job.id, 'x-lease-id': job.leaseId });
    expect(next.errors).toBeUndefined();
  }
}

describe('the automation depth limit', () => {
  it('stops a chain of actions at depth 3: jobs of depths 0 to 3, the depth-4 write audited', async () => {
    await createLink({ n: 0, via: 'action' });
    expect(await relayUntilNoJob()).toEqual([0, 1, 2, 3]);
    expect(await deniedEntries('action.invoke')).toEqual([
      { entity_type: 'Link', changes: { action: 'relay', error: 'action_depth_exceeded', depth: 4 }, tenant_id: 'acme', actor_id: 'sally' },
    ]);
    const links = await service.ctx.db.any(`select n from "link" where via = 'action' order by n`);
    expect(links.map((l) => l.n)).toEqual([0, 1, 2, 3, 4]);
    expect((await actionJobs(service)).map((j) => j.payload.depth)).toEqual([0, 1, 2, 3]);
  });

  it('stops a chain of workflow runs at the same depth: runs of depths 0 to 3, the depth-4 write audited', async () => {
    await createLink({ n: 0, via: 'workflow' });
    const [denied] = await waitFor(async () => {
      const entries = await deniedEntries('workflow.run');
      return entries.length > 0 && entries;
    }, 20_000);
    expect(denied).toEqual({ entity_type: 'Link', changes: { workflow: 'chain', error: 'action_depth_exceeded', depth: 4 }, tenant_id: 'acme', actor_id: 'sally' });
    const runs = await service.ctx.db.any(`select depth from svc_workflow_runs where workflow = 'chain' order by depth`);
    expect(runs.map((r) => r.depth)).toEqual([0, 1, 2, 3]);
    expect((await service.ctx.db.one(`select count(*)::int as n from "link" where via = 'workflow'`)).n).toBe(5);
  });
});
