/**
 * Read replicas (SVC_READ_DATABASE_URL): record reads and public read are
 * served by a real streaming replica, writes by the primary. With the
 * replica's replay paused, a new write is invisible to reads until replay
 * resumes: the read-your-writes rule docs/operations.md states (a mutation
 * answers with the record it wrote, from the primary).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReplicaPair, type ReplicaPair } from '../helpers/replica.ts';
import { REPO_ROOT, startTestService, type TestService } from '../helpers/service.ts';
import { bearer, call, waitFor } from '../jobs/helpers.ts';

const CATALOG = `${REPO_ROOT}/test/projections/fixtures/catalog/schema.ts`;

let pair: ReplicaPair;
let service: TestService;
let admin: string;

beforeAll(async () => {
  pair = await startReplicaPair();
  service = await startTestService({
    fixture: CATALOG,
    database: { url: pair.primaryUrl, name: 'postgres', drop: async () => undefined },
    env: {
      DATABASE_URL: pair.primaryUrl,
      SVC_READ_DATABASE_URL: pair.replicaUrl,
      SVC_PUBLIC_READ_MODELS: 'Product',
      RATE_LIMIT_RPS: '1000000',
    },
  });
  admin = await service.token({ role: 'Admin' });
}, 120_000);
afterAll(async () => {
  await service?.close();
  await pair?.stop();
});

const gql = async (query: string, variables?: Record<string, unknown>) => {
  const reply = await call(service.url, 'POST', '/graphql', { body: { query, variables }, headers: bearer(admin) });
  if (reply.body.errors) throw new Error(JSON.stringify(reply.body.errors));
  return reply.body.data;
};
const readRecord = async (id: string) => (await gql('query($id: ID!) { record(model: "Product", id: $id) }', { id })).record;
const listNames = async () => ((await gql('query { records(model: "Product", limit: 100) }')).records as Array<{ name: string }>).map((r) => r.name).sort();
const publicNames = async () => {
  const reply = await call(service.url, 'GET', '/public/records/Product?limit=100');
  expect(reply.status).toBe(200);
  return (reply.body.items as Array<{ name: string }>).map((item) => item.name).sort();
};

describe('a streaming read replica', () => {
  it('serves record reads and public read once the write has replayed', async () => {
    const { create } = await gql('mutation { create(model: "Product", data: {name: "Alpha", status: "published"}) }');
    await waitFor(async () => (await readRecord(create.id))?.name === 'Alpha', 10_000);
    await waitFor(async () => (await publicNames()).includes('Alpha'), 10_000);
    expect(await listNames()).toEqual(['Alpha']);
  });

  it('reads do not see a write the replica has not replayed; writes and their answers use the primary', async () => {
    await pair.onReplica('select pg_wal_replay_pause()');
    let created: { id: string; name: string };
    try {
      created = (await gql('mutation { create(model: "Product", data: {name: "Beta", status: "published"}) }')).create;
      // The mutation's answer comes from the primary: the writer sees its own write.
      expect(created.name).toBe('Beta');
      const onPrimary = await service.ctx.db.one<{ n: number }>(`select count(*)::int as n from "product" where "id" = $1`, [created.id]);
      expect(onPrimary.n).toBe(1);
      // Reads go to the replica, which has not replayed it.
      expect(await readRecord(created.id)).toBeNull();
      expect(await listNames()).toEqual(['Alpha']);
      expect(await publicNames()).toEqual(['Alpha']);
      const page = await gql('query { paginatedRecords(model: "Product", first: 10) { items totalCount } }');
      expect(page.paginatedRecords.totalCount).toBe(1);
    } finally {
      await pair.onReplica('select pg_wal_replay_resume()');
    }
    await waitFor(async () => (await readRecord(created.id))?.name === 'Beta', 10_000);
    await waitFor(async () => (await publicNames()).includes('Beta'), 10_000);
    expect(await listNames()).toEqual(['Alpha', 'Beta']);
  });
});
