/**
 * The CRM fixture's wonDeal workflow end to end, with its workers in a real
 * process: a deal marked won starts a run with the write; the billing worker
 * invoices it (the run awaits the result), the deal is marked invoiced with
 * the seller's permissions, and the notifications worker announces it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../helpers/service.ts';
import { call, gql, watchRun } from './helpers.ts';

let service: TestService;
let worker: ChildProcess | null = null;
let output = '';
const lines: Array<{ match: RegExp; resolve: (line: string) => void }> = [];

/** Resolves with the worker's first output line matching `match` (past or future). */
function workerSays(match: RegExp): Promise<string> {
  const seen = output.split('\n').find((line) => match.test(line));
  if (seen) return Promise.resolve(seen);
  return new Promise((resolve) => lines.push({ match, resolve }));
}

beforeAll(async () => {
  service = await startTestService({ fixture: 'crm', env: { SVC_WORKFLOW_POLL_MS: '200', RATE_LIMIT_RPS: '100000' } });
});
afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((resolve) => worker!.once('exit', resolve));
    worker.kill('SIGTERM');
    await exited;
  }
  await service?.close();
});

describe('the CRM won-deal workflow', { timeout: 60_000 }, () => {
  it('invoices, marks invoiced and notifies, with a real worker process', async () => {
    const admin = await service.token({ role: 'Admin', userId: 'root' });
    const seller = await service.token({ role: 'Manager', userId: 'seller-1' });
    const minted = await call(service.url, 'POST', '/jobs/workers', admin, { name: 'crm-workers', queues: ['billing', 'notifications'] });
    worker = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'crm-worker.ts')], {
      env: { ...process.env, BASE_URL: service.url, WORKER_TOKEN: minted.body.token },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    worker.stdout!.on('data', (chunk) => {
      output += chunk;
      for (const line of output.split('\n')) {
        for (const waiter of lines.filter((w) => w.match.test(line))) {
          lines.splice(lines.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    });

    const company = (await gql(service.url, seller, 'mutation($d: JSON!) { create(model: "Company", data: $d) }', { d: { name: 'Acme Corp' } })).create;
    const deal = (await gql(service.url, seller, 'mutation($d: JSON!) { create(model: "Deal", data: $d) }', {
      d: { title: 'Acme rollout', amount: 12000, companyId: company.id, stage: 'proposal' },
    })).create;
    await gql(service.url, seller, 'mutation($id: ID!, $d: JSON!) { update(model: "Deal", id: $id, data: $d) }', { id: deal.id, d: { stage: 'won' } });

    const runs = await call(service.url, 'GET', '/workflows/runs?workflow=wonDeal', admin);
    expect(runs.body.items).toHaveLength(1);
    const done = await watchRun(service.url, admin, runs.body.items[0].id, undefined, 40_000);
    expect(done.status).toBe('succeeded');
    expect(done.steps.map((s: any) => [s.id, s.status, s.attempts])).toEqual([['invoice', 'succeeded', 1], ['markInvoiced', 'succeeded', 1], ['notify', 'succeeded', 1]]);
    expect(done.steps[0].output.result).toEqual({ ok: true, invoiceId: `INV-${deal.id}`, total: '12000 EUR' });
    expect(await workerSays(new RegExp(`^notified ${deal.id} INV-${deal.id} seller-1$`))).toBeTruthy();

    const after = (await gql(service.url, seller, 'query($id: ID!) { record(model: "Deal", id: $id) }', { id: deal.id })).record;
    expect(after).toMatchObject({ stage: 'won', invoiced: true });
    // The workflow's write is the seller's (their permissions), and starts no second run.
    const history = (await gql(service.url, seller, 'query($id: ID!) { recordHistory(model: "Deal", id: $id) { eventType actorId } }', { id: deal.id })).recordHistory;
    expect(history.map((e: any) => [e.eventType, e.actorId])).toEqual([['Created', 'seller-1'], ['Updated', 'seller-1'], ['Updated', 'seller-1']]);
    expect((await call(service.url, 'GET', '/workflows/runs?workflow=wonDeal', admin)).body.items).toHaveLength(1);
    // Both jobs carry the deal's tenant (global here) and the seller as their creator.
    const jobs = await service.ctx.db.manyOrNone(`select queue, kind, status, tenant_id, created_by from svc_jobs where queue in ('billing', 'notifications') order by id`);
    expect(jobs).toEqual([
      { queue: 'billing', kind: 'invoice', status: 'succeeded', tenant_id: null, created_by: 'seller-1' },
      { queue: 'notifications', kind: 'dealWon', status: expect.stringMatching(/^(leased|succeeded)$/), tenant_id: null, created_by: 'seller-1' },
    ]);
  });
});
