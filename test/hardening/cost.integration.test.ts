/**
 * Bounded work per GraphQL request (issue 10, point 3): root fields and
 * aliases, rows over the document, response size, and the prepared-statement
 * cache, each refused with a clear GraphQL error while the server stays responsive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, RECORDS, startRecordsService, type Gql } from '../records/helpers.ts';

let service: TestService;
let admin: Gql;

beforeAll(async () => {
  service = await startRecordsService({
    env: { SVC_GRAPHQL_MAX_RESPONSE_BYTES: '4096', SVC_DB_POOL_SIZE: '1', SVC_DB_MAX_PREPARED_STATEMENTS: '5' },
  });
  admin = await clientFor(service, { role: 'Admin' });
  for (let i = 0; i < 60; i++) await create(admin, 'Company', { name: `Company ${i}`, tags: ['a', 'b', 'c'] });
});
afterAll(() => service?.close());

describe('cost limits', () => {
  it('refuses 1,000 aliased records(limit: 1000) quickly while a concurrent /health answers promptly', async () => {
    const query = `{ ${Array.from({ length: 1000 }, (_, i) => `a${i}: records(model: "Company", limit: 1000)`).join(' ')} }`;
    const started = performance.now();
    const attack = Promise.all([admin(query), admin(query), admin(query)]);
    const healthStarted = performance.now();
    const health = await fetch(`${service.url}/health`);
    const healthMs = performance.now() - healthStarted;
    const replies = await attack;
    const attackMs = performance.now() - started;
    expect(health.status).toBe(200);
    for (const r of replies) {
      expect(r.code).toBe('VALIDATION_ERROR');
      expect(r.errors![0].message).toMatch(/at most 20 root fields/);
      expect(r.data).toBeUndefined();
    }
    expect(attackMs).toBeLessThan(1000);
    expect(healthMs).toBeLessThan(500);
  });

  it('refuses a document whose limit/first sum exceeds the row budget, counting variables and includes', async () => {
    const six = `{ ${Array.from({ length: 6 }, (_, i) => `a${i}: records(model: "Company", limit: 1000)`).join(' ')} }`;
    const r = await admin(six);
    expect(r.code).toBe('VALIDATION_ERROR');
    expect(r.errors![0].message).toMatch(/at most 5000 rows/);
    // $n above the maximum counts as clamped (1000); an include reads its rows once more.
    const viaVariables = await admin(`query($n: Int) { a: records(model: "Company", limit: $n, include: ["contacts"])
      b: records(model: "Company", limit: $n) c: records(model: "Company", limit: $n) d: records(model: "Company", limit: $n)
      e: records(model: "Company", limit: $n) }`, { n: 2000 });
    expect(viaVariables.errors![0].message).toMatch(/may read 6000/);
    const fine = await admin('{ a: records(model: "Company", limit: 2) b: records(model: "Company", limit: 2) }');
    expect(fine.errors).toBeUndefined();
  });

  it('refuses a response larger than SVC_GRAPHQL_MAX_RESPONSE_BYTES with a GraphQL error', async () => {
    const r = await admin(RECORDS, { model: 'Company', limit: 1000 });
    expect(r.code).toBe('VALIDATION_ERROR');
    expect(r.errors![0].message).toMatch(/exceed 4096 bytes/);
    expect((await admin(RECORDS, { model: 'Company', limit: 3 })).data.records).toHaveLength(3);
  });
});

describe('prepared statements', () => {
  it('keeps at most SVC_DB_MAX_PREPARED_STATEMENTS per connection, whatever the number of where shapes', async () => {
    for (let i = 0; i < 40; i++) {
      const where = Object.fromEntries(Array.from({ length: 1 + (i % 8) }, (_, k) => [k % 2 ? 'name' : 'employees', k % 2 ? `n${i}` : { gte: i }]));
      const shaped = { ...where, ...(i >= 8 ? { OR: Array.from({ length: i - 6 }, () => ({ active: true })) } : {}) };
      for (let repeat = 0; repeat < 3; repeat++) expect((await admin(RECORDS, { model: 'Company', where: shaped, limit: 1 })).errors).toBeUndefined();
    }
    // SVC_DB_POOL_SIZE=1: this runs on the very connection the records statements ran on. The runtime's
    // fixed statements (change feed, consumer cursors, projection refresh) are a bounded set, not counted.
    const { n } = await service.ctx.db.one<{ n: number }>(
      `select count(*)::int as n from pg_prepared_statements where name like 'svc\\_rec\\_%'`);
    expect(n).toBeLessThanOrEqual(5);
    expect(n).toBeGreaterThan(0);
  });
});
