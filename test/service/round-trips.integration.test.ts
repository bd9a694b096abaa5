/**
 * One round trip per write (issue 16, ADR 009): the statements a request
 * itself sends to Postgres before it answers. Background work (the change
 * feed, consumers, heartbeats) is told apart by the request's async context,
 * and anything sent after the response is ended (a read the feed arms while
 * the request commits) is not the request's. A create, an enqueue, a lease,
 * a complete and a records read each send one statement, with no BEGIN or
 * COMMIT around it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { recordStatements, type StatementRecorder } from '../helpers/statements.ts';
import { CREATE, RECORDS, startRecordsService } from '../records/helpers.ts';
import { bearer, call, mintWorker, workerHeader } from '../jobs/helpers.ts';

let service: TestService;
let recorder: StatementRecorder;
let user: Record<string, string>;
let worker: Record<string, string>;

beforeAll(async () => {
  service = await startRecordsService();
  recorder = recordStatements(service.ctx.server);
  user = bearer(await service.token({ role: 'Manager', userId: 'round-trips' }));
  worker = workerHeader((await mintWorker(service, ['round-trips'])).token);
});
afterAll(async () => {
  recorder?.restore();
  await service?.close();
});

/** The statements one request sent before it answered (its status checked). */
async function statementsOf(method: string, path: string, body: unknown, headers: Record<string, string>, status: number) {
  const reply = await call(service.url, method, path, { body, headers });
  expect(reply.status, JSON.stringify(reply.body)).toBe(status);
  return { statements: recorder.last(), body: reply.body };
}

const graphql = (query: string, variables: object) => statementsOf('POST', '/graphql', { query, variables }, user, 200);

describe('one round trip per request', () => {
  it('GraphQL create: one statement (row, event and audit entry together)', async () => {
    await graphql(RECORDS, { model: 'Company', limit: 1 }); // the session is looked up once, then cached
    const { statements, body } = await graphql(CREATE, { model: 'Company', data: { name: 'Round trip' } });
    expect(body.errors).toBeUndefined();
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^with created as \(insert into "company"/);
    expect(statements[0]).toContain('insert into svc_events');
    expect(statements[0]).toContain('insert into svc_audit');
  });

  it('GraphQL records: one statement', async () => {
    const { statements } = await graphql(RECORDS, { model: 'Company', limit: 5 });
    expect(statements).toHaveLength(1);
  });

  it('POST /jobs, POST /jobs/lease, POST /jobs/{id}/complete and POST /jobs/complete: one statement each', async () => {
    const enqueue = () => statementsOf('POST', '/jobs', { queue: 'round-trips', kind: 'k' }, user, 201);
    const first = await enqueue();
    expect(first.statements).toHaveLength(1);
    expect(first.statements[0]).toMatch(/^with created as \( insert into svc_jobs/);
    await enqueue();
    const lease = await statementsOf('POST', '/jobs/lease', { queues: ['round-trips'], capacity: 2, visibilitySecs: 30 }, worker, 200);
    expect(lease.statements).toHaveLength(1);
    const [a, b] = lease.body.jobs as Array<{ id: string; leaseId: string }>;
    const one = await statementsOf('POST', `/jobs/${a.id}/complete`, { leaseId: a.leaseId, result: { ok: true } }, worker, 204);
    expect(one.statements).toHaveLength(1);
    const batch = await statementsOf('POST', '/jobs/complete', { items: [{ id: b.id, leaseId: b.leaseId, result: null }] }, worker, 200);
    expect(batch.statements).toHaveLength(1);
    expect([first, lease, one, batch].flatMap((r) => r.statements).filter((s) => /^(begin|commit)\b/i.test(s))).toEqual([]);
  });
});
