/**
 * The transactional path of a bound create (taken when the create cannot be
 * one statement: here, history `off`, where the write appends no event row)
 * enqueues exactly what the one-statement path does: same key, same payload,
 * same condition.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { actionJobs, CREATE, startActionsService, userOf, type User } from './helpers.ts';

let service: TestService;
let sales: User;

beforeAll(async () => {
  service = await startActionsService({ env: { SVC_HISTORY_POLICY: 'off' } });
  sales = await userOf(service, 'Sales', 'sue', 'initech');
});
afterAll(() => service?.close());

describe('a bound create on the transactional path', () => {
  it('enqueues in the write\'s transaction with the same key and payload', async () => {
    const hot = (await sales.gql(CREATE, { model: 'Lead', data: { name: 'Tx Path', stage: 'hot' } })).data.create;
    const cold = (await sales.gql(CREATE, { model: 'Lead', data: { name: 'Tx Cold' } })).data.create;
    const { id: eventId } = await service.ctx.db.one(`select id from svc_changes where stream_id = $1 and event_type = 'Created'`, [hot.id]);
    const jobs = await actionJobs(service, `payload->>'recordId' = $1`, [hot.id]);
    expect(jobs.map((j) => [j.kind, j.idempotency_key])).toEqual([['scoreLead', `${eventId}:scoreLead`], ['hotLead', `${eventId}:hotLead`]]);
    expect(jobs[0].payload).toEqual({
      action: 'scoreLead', trigger: 'event', model: 'Lead', event: 'created', eventId, recordId: hot.id, tenantId: 'initech',
      input: { id: hot.id, name: 'Tx Path', stage: 'hot', ownerId: null }, old: null,
      actor: { id: 'sue', role: 'Sales', tenantId: 'initech' }, depth: 0,
    });
    expect((await actionJobs(service, `payload->>'recordId' = $1`, [cold.id])).map((j) => j.kind)).toEqual(['scoreLead']);
  });
});
