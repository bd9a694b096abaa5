/**
 * The generated client.ts against a real server (CRM fixture): create,
 * update, records with where/orderBy/include, paginatedRecords, record,
 * delete, errors with their field, and a subscription event after a create;
 * a subscription that outlives its socket (server restarts mid-stream).
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FIXTURES, REPO_ROOT, buildOk, tempDir } from './helpers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { until } from '../feed/helpers.ts';

let svc: TestService;
// The generated module's own types are checked by client.test.ts; here it runs.
let client: any;
let createClient: any;
let token: string;

beforeAll(async () => {
  const outDir = tempDir('client-run');
  await buildOk({ schemaPath: join(FIXTURES, 'crm', 'schema.ts'), outDir });
  mkdirSync(join(outDir, 'node_modules'));
  symlinkSync(join(REPO_ROOT, 'node_modules', 'graphql-ws'), join(outDir, 'node_modules', 'graphql-ws'), 'dir');
  ({ createClient } = await import(join(outDir, 'client.ts')));
  svc = await startTestService({ fixture: 'crm' });
  token = await svc.token({ role: 'Admin' });
  client = createClient({ url: svc.url, token, webSocketImpl: WebSocket });
});

afterAll(async () => {
  await client?.close();
  await svc?.close();
});

describe('generated client.ts against a server', () => {
  it('creates, updates, reads with where, orderBy and include, pages, and deletes', async () => {
    const acme = await client.Company.create({ name: 'Acme', employees: 12, address: { city: 'Lyon', country: 'FR' } });
    expect(acme).toMatchObject({ name: 'Acme', employees: 12, address: { city: 'Lyon', country: 'FR' } });
    const globex = await client.Company.create({ name: 'Globex', employees: 300 });
    const deal = await client.Deal.create({ title: 'Big one', amount: 1000, companyId: acme.id, closeDate: new Date('2026-12-01T00:00:00Z') });
    expect(deal).toMatchObject({ stage: 'lead', currency: 'EUR', companyId: acme.id });
    expect((await client.Deal.update(deal.id, { stage: 'won' })).stage).toBe('won');

    const rows = await client.Company.records({
      where: { OR: [{ name: { startsWith: 'Ac' } }, { employees: { gte: 100 } }] },
      orderBy: { name: 'DESC' },
      include: ['deals'],
    });
    expect(rows.map((r: { name: string }) => r.name)).toEqual(['Globex', 'Acme']);
    expect(rows[1].deals.map((d: { id: string }) => d.id)).toEqual([deal.id]);

    const page = await client.Deal.paginatedRecords({ where: { stage: { in: ['won'] } }, first: 1, include: ['company'] });
    expect(page.totalCount).toBe(1);
    expect(page.items[0].company.name).toBe('Acme');
    expect(page.pageInfo).toEqual({ hasNextPage: false, endCursor: expect.any(String) });

    expect(await client.Company.delete(globex.id)).toBe(true);
    expect(await client.Company.record(globex.id)).toBeNull();
    expect((await client.Company.record(acme.id, { include: ['deals'] })).deals).toHaveLength(1);
  });

  it('throws a ClientError carrying the code and field of a validation error', async () => {
    const error = await client.Company.create({ name: 'A' }).catch((e: unknown) => e);
    expect(error.name).toBe('ClientError');
    expect(error.errors[0]).toMatchObject({ code: 'VALIDATION_ERROR', field: 'name' });
  });

  it('delivers a subscription event after a create', async () => {
    // `after` an event seen before subscribing: everything committed since arrives, so the
    // create below cannot race the subscription's start.
    const first = await client.Product.create({ name: 'Widget', sku: 'W-1', price: 5 });
    const history = await client.request('query ($id: ID!) { recordHistory(model: "Product", id: $id) { eventId } }', { id: first.id });
    const errors: unknown[] = [];
    let stop: () => void = () => undefined;
    const arrived = new Promise<{ eventType: string; recordId: string }>((resolve) => {
      stop = client.Product.subscribe((change: { eventType: string; recordId: string }) => {
        if (change.recordId !== first.id) resolve(change);
      }, { after: history.recordHistory[0].eventId, onError: (e: unknown) => errors.push(e) });
    });
    const second = await client.Product.create({ name: 'Gadget', sku: 'G-1', price: 7 });
    const change = await arrived;
    stop();
    expect(errors).toEqual([]);
    expect(change).toMatchObject({ eventType: 'Created', modelName: 'Product', recordId: second.id });
  });
});

/** Retries at once: the test waits on conditions, not on the client's backoff. */
const immediately = () => Promise.resolve();

/** The eventId of a record's creation: a subscription `after` it cannot race later creates. */
async function creationEventId(model: string, id: string): Promise<string> {
  const history = await client.request(`query ($id: ID!) { recordHistory(model: "${model}", id: $id) { eventId } }`, { id });
  return history.recordHistory[0].eventId;
}

/** A port nothing listens on (taken, then given back). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('generated client.ts subscribe across closed sockets', () => {
  it('delivers every create exactly once and in order while its server restarts mid-stream', async () => {
    // Writes go through svc; the subscriber follows a second instance on the same database, restarted on its port.
    let relay = await startTestService({ fixture: 'crm', database: svc.database });
    const port = relay.port;
    // The client's reconnections wait until the relay listens again.
    let listening = Promise.resolve();
    let relayUp = () => undefined as void;
    const subscriber = createClient({ url: relay.url, token, webSocketImpl: WebSocket, retryWait: () => listening });
    const seed = await client.Product.create({ name: 'Seed', sku: 'R-SEED', price: 1 });
    const received: string[] = [];
    const errors: unknown[] = [];
    const stop = subscriber.Product.subscribe((change: { recordId: string }) => received.push(change.recordId), {
      after: await creationEventId('Product', seed.id), onError: (e: unknown) => errors.push(e),
    });
    const created: string[] = [];
    const create = async () => created.push((await client.Product.create({ name: `R${created.length}`, sku: `R-${created.length}`, price: 1 })).id);
    try {
      for (let restart = 0; restart < 3; restart += 1) {
        for (let i = 0; i < 6; i += 1) await create(); // live, some still in flight when the socket closes
        listening = new Promise((resolve) => (relayUp = resolve));
        await relay.close(); // the database is svc's: kept
        for (let i = 0; i < 6; i += 1) await create(); // while no socket is open
        relay = await startTestService({ fixture: 'crm', database: svc.database, port });
        relayUp();
      }
      for (let i = 0; i < 6; i += 1) await create();
      // A last create as a barrier: once it arrives, every earlier one (and any duplicate of one) has.
      const barrier = (await client.Product.create({ name: 'Barrier', sku: 'R-END', price: 1 })).id;
      await until(() => received.includes(barrier) || errors.length > 0, 'the barrier create', 30_000);
      expect(received).toEqual([...created, barrier]);
      expect(errors).toEqual([]);
      expect(created).toHaveLength(42);
    } finally {
      stop();
      await subscriber.close();
      await relay.close();
    }
  });

  it('calls onError when the server cannot resume after the given eventId', async () => {
    const errors: Error[] = [];
    const stop = client.Product.subscribe(() => undefined, { after: '01ARZ3NDEKTSV4RRFFQ69G5FAV', onError: (e: Error) => errors.push(e) });
    await until(() => errors.length > 0, 'onError', 10_000);
    stop();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ name: 'SubscriptionError', after: '01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    expect(errors[0].message).toMatch(/cannot resume after 01ARZ3NDEKTSV4RRFFQ69G5FAV/);
    expect((errors[0].cause as { errors: unknown[] }).errors).toEqual([expect.objectContaining({ code: 'VALIDATION_ERROR', field: 'after' })]);
  });

  it('calls onError when its reconnection attempts run out', async () => {
    const unreachable = createClient({ url: `http://127.0.0.1:${await closedPort()}`, token, webSocketImpl: WebSocket, retryAttempts: 3, retryWait: immediately });
    const errors: Error[] = [];
    unreachable.Product.subscribe(() => undefined, { onError: (e: Error) => errors.push(e) });
    await until(() => errors.length > 0, 'onError', 10_000);
    await unreachable.close();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ name: 'SubscriptionError', after: null });
    expect(errors[0].message).toMatch(/gave up after 3 reconnection attempts/);
  });
});
