/** POST /graphql details: enqueueJob, operation selection, aliases and variables on both execution paths. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, post, startRecordsService, type Gql } from '../records/helpers.ts';

let service: TestService;
let gql: Gql;

beforeAll(async () => {
  service = await startRecordsService();
  gql = await clientFor(service, { role: 'Sales', tenantId: 'jobs-t', userId: 'seller' });
});
afterAll(() => service?.close());

const ENQUEUE = `mutation($queue: String!, $kind: String!, $payload: JSON, $key: String) {
  enqueueJob(queue: $queue, kind: $kind, payload: $payload, idempotencyKey: $key) { id } }`;

describe('enqueueJob', () => {
  it('enqueues a tenant-stamped job; a repeated idempotency key returns the same id', async () => {
    const r = await gql(ENQUEUE, { queue: 'mail', kind: 'welcome', payload: { to: 'x' }, key: 'k1' });
    expect(r.errors).toBeUndefined();
    const id = r.data.enqueueJob.id;
    expect(id).toMatch(/^[0-9A-Z]{26}$/);
    expect((await gql(ENQUEUE, { queue: 'mail', kind: 'welcome', key: 'k1' })).data.enqueueJob.id).toBe(id);
    const token = await service.token({ role: 'Sales', tenantId: 'jobs-t' });
    const own = await fetch(`${service.url}/jobs/${id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(own.status).toBe(200);
    const other = await fetch(`${service.url}/jobs/${id}`, { headers: { authorization: `Bearer ${await service.token({ role: 'Sales', tenantId: 'other' })}` } });
    expect(other.status).toBe(404);
  });

  it('is a VALIDATION_ERROR for a blank queue or kind', async () => {
    expect((await gql(ENQUEUE, { queue: ' ', kind: 'x' })).code).toBe('VALIDATION_ERROR');
    expect((await gql(ENQUEUE, { queue: 'q', kind: '' })).code).toBe('VALIDATION_ERROR');
  });
});

describe('execution', () => {
  it('honours aliases, several fields and operationName', async () => {
    await create(gql, 'Company', { name: 'Aliased' });
    const doc = `query A { first: records(model: "Company") }
      query B { page: paginatedRecords(model: "Company", first: 1) { items pageInfo { hasNextPage } } names: records(model: "Company", limit: 1) }`;
    const a = await gql(doc.replace('query A', 'query A'), undefined);
    expect(a.code).toBe('VALIDATION_ERROR'); // two operations need operationName
    const token = await service.token({ role: 'Sales', tenantId: 'jobs-t' });
    const headers = { authorization: `Bearer ${token}` };
    const one = await post(service.url, { query: doc, operationName: 'A' }, headers);
    expect(one.data.first[0].name).toBe('Aliased');
    const two = await post(service.url, { query: doc, operationName: 'B' }, headers);
    expect(two.data.page.items[0].name).toBe('Aliased');
    expect(two.data.names).toHaveLength(1);
  });

  it('reports bad variables as VALIDATION_ERROR and keeps the cache per query text', async () => {
    const q = 'query($limit: Int) { records(model: "Company", limit: $limit) }';
    expect((await gql(q, { limit: 'many' })).code).toBe('VALIDATION_ERROR');
    expect((await gql(q, { limit: 1 })).data.records).toHaveLength(1);
    expect((await gql(q, { limit: 0 })).errors![0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'limit' });
    expect((await gql(q, { limit: 5000 })).errors).toBeUndefined(); // clamped to 1000, CONTRACT section 4
  });
});
