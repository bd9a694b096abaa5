/**
 * Enqueue on write (CONTRACT section 11): a write matching a binding commits
 * with its job on queue `actions` (idempotency key `{eventId}:{action}`, the
 * payload of the contract), a refused or rolled-back write enqueues nothing,
 * `when` conditions decide, updateMany enqueues one job per changed row, and
 * restore / hardDelete count as updated / deleted.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { actionJobs, CREATE, rest, startActionsService, UPDATE, userOf, type User } from './helpers.ts';

let service: TestService;
let sales: User;
let manager: User;

beforeAll(async () => {
  service = await startActionsService();
  sales = await userOf(service, 'Sales', 'sally', 'acme');
  manager = await userOf(service, 'Manager', 'manny', 'acme');
});
afterAll(() => service?.close());

async function createLead(user: User, data: Record<string, unknown>) {
  const r = await user.gql(CREATE, { model: 'Lead', data });
  if (!r.data?.create) throw new Error(`create failed: ${JSON.stringify(r.body)}`);
  return r.data.create;
}

const jobsOfRecord = (id: string) => actionJobs(service, `payload->>'recordId' = $1`, [id]);
const eventIdOf = async (id: string, type: string) =>
  (await service.ctx.db.one<{ id: string }>(`select id from svc_events where stream_id = $1 and event_type = $2 order by seq desc limit 1`, [id, type])).id;

describe('a bound create', () => {
  it('commits its job with it: key {eventId}:{action}, payload with input, actor, tenant and depth', async () => {
    const lead = await createLead(sales, { name: 'Ada Lovelace' });
    const [job] = await jobsOfRecord(lead.id);
    const eventId = await eventIdOf(lead.id, 'Created');
    expect(job).toMatchObject({
      kind: 'scoreLead', status: 'queued', tenant_id: 'acme', created_by: 'sally', idempotency_key: `${eventId}:scoreLead`,
    });
    expect(job.payload).toEqual({
      action: 'scoreLead', trigger: 'event', model: 'Lead', event: 'created', eventId, recordId: lead.id, tenantId: 'acme',
      input: { id: lead.id, name: 'Ada Lovelace', stage: 'new', ownerId: null }, old: null,
      actor: { id: 'sally', role: 'Sales', tenantId: 'acme' }, depth: 0,
    });
    // The job's own history: one JobEnqueued event. Its audit trail is the write's record.create
    // entry (one per change): no job.enqueue entry of its own.
    const trail = await service.ctx.db.one<{ events: number; entries: number }>(
      `select (select count(*)::int from svc_events where stream_id = $1 and event_type = 'JobEnqueued') as events,
              (select count(*)::int from svc_audit where entity_id = $1 and action = 'job.enqueue') as entries`, [job.id]);
    expect(trail).toEqual({ events: 1, entries: 0 });
    const created = await service.ctx.db.one<{ n: number }>(
      `select count(*)::int as n from svc_audit where entity_id = $1 and action = 'record.create' and event_id = $2`, [lead.id, eventId]);
    expect(created.n).toBe(1);
  });

  it('enqueues a conditional action only when `equals` holds on the stored row', async () => {
    const cold = await createLead(sales, { name: 'Cold Lead' });
    const hot = await createLead(sales, { name: 'Hot Lead', stage: 'hot' });
    expect((await jobsOfRecord(cold.id)).map((j) => j.kind)).toEqual(['scoreLead']);
    expect((await jobsOfRecord(hot.id)).map((j) => j.kind).sort()).toEqual(['hotLead', 'scoreLead']);
    const [hotJob] = await actionJobs(service, `payload->>'recordId' = $1 and kind = 'hotLead'`, [hot.id]);
    expect(hotJob.payload.input).toEqual({ id: hot.id, stage: 'hot' });
  });

  it('enqueues nothing when validation refuses the write, or the database rolls it back', async () => {
    const before = (await actionJobs(service)).length;
    const invalid = await sales.gql(CREATE, { model: 'Lead', data: { name: 'x' } });
    expect(invalid.code).toBe('VALIDATION_ERROR');
    await createLead(sales, { name: 'Unique Name' });
    // The unique violation fails the one statement that also holds the job: nothing of it commits.
    const duplicate = await sales.gql(CREATE, { model: 'Lead', data: { name: 'Unique Name', stage: 'hot' } });
    expect(duplicate.code).toBe('VALIDATION_ERROR');
    expect((await actionJobs(service)).length).toBe(before + 1);
    const orphans = await service.ctx.db.any(`select j.id from svc_jobs j where j.queue = 'actions'
      and not exists (select 1 from "lead" l where l.id = j.payload->>'recordId')`);
    expect(orphans).toEqual([]);
  });
});

describe('a bound update', () => {
  it('enqueues when the condition holds, with the old row; not when the field did not change', async () => {
    const lead = await createLead(sales, { name: 'Grace Hopper', stage: 'hot', score: 3 });
    await sales.gql(UPDATE, { model: 'Lead', id: lead.id, data: { score: 4 } });
    await sales.gql(UPDATE, { model: 'Lead', id: lead.id, data: { stage: 'won' } });
    await sales.gql(UPDATE, { model: 'Lead', id: lead.id, data: { stage: 'won', score: 5 } }); // stage did not change
    const celebrations = await actionJobs(service, `payload->>'recordId' = $1 and kind = 'celebrate'`, [lead.id]);
    expect(celebrations).toHaveLength(1);
    const eventIds = await service.ctx.db.map(`select id from svc_events where stream_id = $1 and event_type = 'Updated' order by seq`, [lead.id], (r) => r.id);
    expect(celebrations[0].idempotency_key).toBe(`${eventIds[1]}:celebrate`);
    expect(celebrations[0].payload).toMatchObject({
      event: 'updated', eventId: eventIds[1], input: { id: lead.id, name: 'Grace Hopper' },
      old: { id: lead.id, stage: 'hot', score: 4 }, actor: { id: 'sally', role: 'Sales', tenantId: 'acme' },
    });
  });

  it('rolled back by the database enqueues nothing', async () => {
    const lead = await createLead(sales, { name: 'Rolled Back' });
    await createLead(sales, { name: 'Taken Name' });
    const r = await sales.gql(UPDATE, { model: 'Lead', id: lead.id, data: { stage: 'won', name: 'Taken Name' } });
    expect(r.code).toBe('VALIDATION_ERROR');
    expect(await actionJobs(service, `payload->>'recordId' = $1 and kind = 'celebrate'`, [lead.id])).toEqual([]);
  });

  it('updateMany: one job per changed row, each with its own event and old row', async () => {
    const leads = [];
    for (const name of ['Bulk One', 'Bulk Two', 'Bulk Three']) leads.push(await createLead(sales, { name, stage: 'hot', score: 77 }));
    await createLead(sales, { name: 'Bulk Won', stage: 'won', score: 77 });
    const r = await sales.gql('mutation($w: JSON!, $d: JSON!) { updateMany(model: "Lead", where: $w, data: $d) }', { w: { score: 77 }, d: { stage: 'won' } });
    expect(r.data.updateMany).toBe(4);
    const jobs = await actionJobs(service, `kind = 'celebrate' and payload->'old'->>'score' = '77'`);
    // The row that was already won did not change its stage: no job for it.
    expect(jobs.map((j) => j.payload.recordId).sort()).toEqual(leads.map((l) => l.id).sort());
    expect(new Set(jobs.map((j) => j.payload.eventId)).size).toBe(3);
    for (const job of jobs) expect(job.idempotency_key).toBe(`${job.payload.eventId}:celebrate`);
  });

  it('restore counts as updated, delete and hardDelete as deleted', async () => {
    const lead = await createLead(sales, { name: 'Lifecycle', stage: 'won' });
    const del = (op: string) => manager.gql(`mutation($id: ID!) { ${op}(model: "Lead", id: $id) }`, { id: lead.id });
    expect((await del('delete')).errors).toBeUndefined();
    expect((await del('restore')).errors).toBeUndefined();
    expect((await del('hardDelete')).errors).toBeUndefined();
    const jobs = await jobsOfRecord(lead.id);
    expect(jobs.map((j) => [j.kind, j.payload.event])).toEqual([['scoreLead', 'created'], ['leadGone', 'deleted'], ['leadGone', 'deleted']]);
    // restore is an updated event whose stage did not change: celebrate's condition is false.
    expect(jobs[2].payload.old).toMatchObject({ id: lead.id, name: 'Lifecycle' });
    expect(jobs[2].payload.input).toEqual({});
  });
});

describe('queue actions', () => {
  it('is reserved: no user can enqueue (and so forge) an action job', async () => {
    const admin = await userOf(service, 'Admin', 'root');
    const viaRest = await rest(service.url, 'POST', '/jobs', {
      body: { queue: 'actions', kind: 'scoreLead', payload: { actor: { id: 'root', role: 'Admin' }, depth: 0 } },
      headers: { authorization: `Bearer ${admin.token}` },
    });
    expect(viaRest.status).toBe(400);
    expect(viaRest.body.field).toBe('queue');
    const viaGraphql = await admin.gql('mutation { enqueueJob(queue: "actions", kind: "x") { id } }');
    expect(viaGraphql.code).toBe('VALIDATION_ERROR');
  });
});

describe('the payload types the worker fixture imports', () => {
  it('are what build writes for the fixture (actions.ts, models.ts)', () => {
    for (const file of ['actions.ts', 'models.ts']) {
      const checkedIn = readFileSync(join(import.meta.dirname, 'fixtures', 'actions', 'generated', file), 'utf8');
      expect(checkedIn, file).toBe(readFileSync(join(service.dir, file), 'utf8'));
    }
  });
});
