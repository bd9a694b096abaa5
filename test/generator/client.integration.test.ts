/**
 * The generated client.ts against a real server (CRM fixture): create,
 * update, records with where/orderBy/include, paginatedRecords, record,
 * delete, errors with their field, and a subscription event after a create.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FIXTURES, REPO_ROOT, buildOk, tempDir } from './helpers.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let svc: TestService;
// The generated module's own types are checked by client.test.ts; here it runs.
let client: any;

beforeAll(async () => {
  const outDir = tempDir('client-run');
  await buildOk({ schemaPath: join(FIXTURES, 'crm', 'schema.ts'), outDir });
  mkdirSync(join(outDir, 'node_modules'));
  symlinkSync(join(REPO_ROOT, 'node_modules', 'graphql-ws'), join(outDir, 'node_modules', 'graphql-ws'), 'dir');
  const { createClient } = await import(join(outDir, 'client.ts'));
  svc = await startTestService({ fixture: 'crm' });
  const token = await svc.token({ role: 'Admin' });
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
