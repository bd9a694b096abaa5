/**
 * `modelChanges` over /graphql/ws (graphql-ws protocol, real WebSockets):
 * authentication in connection_init, filters by model, tenant and read
 * access, and delivery across two server instances on one database.
 */
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../runtime/ir/types.ts';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, startRecordsService } from '../records/helpers.ts';

let first: TestService;
let second: TestService;
const clients: Client[] = [];

beforeAll(async () => {
  first = await startRecordsService();
  second = await startRecordsService({ database: first.database });
});
afterAll(async () => {
  for (const c of clients) await c.dispose();
  await second?.close();
  await first?.close();
});

interface Feed {
  readonly changes: any[];
  readonly errors: any[];
  /** Resolves once `count` changes arrived (or rejects after a timeout). */
  until(count: number): Promise<any[]>;
}

/** Subscriptions the service's change feed holds: one more once a modelChanges subscription is live. */
const subscribers = (service: TestService) => service.ctx.services.feed.stats().subscribers;

/** Resolves once `service`'s feed holds more than `before` subscribers, or `refused()` (an error answered the subscription). */
async function live(service: TestService, before: number, refused: () => boolean = () => false): Promise<void> {
  const deadline = Date.now() + 5000;
  while (subscribers(service) <= before && !refused()) {
    if (Date.now() > deadline) throw new Error(`no subscription registered within 5000 ms (${subscribers(service)} subscribers)`);
    await new Promise((done) => setTimeout(done, 5));
  }
}

function connect(service: TestService, connectionParams: Record<string, unknown>): Client {
  const client = createClient({ url: `${service.url.replace('http', 'ws')}/graphql/ws`, webSocketImpl: WebSocket, connectionParams, retryAttempts: 0, lazy: false, onNonLazyError: () => undefined });
  clients.push(client);
  return client;
}

async function subscribe(service: TestService, as: { role: Role; tenantId?: string }, model: string | null, how: 'token' | 'authorization' = 'token'): Promise<Feed> {
  const token = await service.token({ role: as.role, tenantId: as.tenantId ?? null });
  const client = connect(service, how === 'token' ? { token } : { authorization: `Bearer ${token}` });
  const feed = { changes: [] as any[], errors: [] as any[] };
  const before = subscribers(service);
  const query = model === null ? 'subscription { modelChanges { eventType modelName eventId recordId tenantId } }'
    : `subscription { modelChanges(model: "${model}") { eventType modelName eventId recordId tenantId } }`;
  client.subscribe({ query }, {
    next: (message) => (message.errors ? feed.errors.push(...message.errors) : feed.changes.push(message.data!.modelChanges)),
    error: (error) => feed.errors.push(error),
    complete: () => undefined,
  });
  // The subscription is live once the server has registered it with its change feed (or refused it).
  await live(service, before, () => feed.errors.length > 0);
  return {
    ...feed,
    async until(count) {
      const deadline = Date.now() + 5000;
      while (feed.changes.length < count && Date.now() < deadline) await new Promise((done) => setTimeout(done, 25));
      return feed.changes;
    },
  };
}

describe('modelChanges', () => {
  it('refuses a connection without a valid token', async () => {
    for (const params of [{}, { token: 'nope' }, { authorization: 'Basic abc' }]) {
      const closed = new Promise<number>((done) => {
        const client = connect(first, params);
        client.on('closed', (event: any) => done(event.code));
      });
      expect(await closed).toBe(4403);
    }
  });

  it('refuses a tenant-less non-Admin or another tenant\'s user naming a tenant (4403); a tenant-less Admin enters it', async () => {
    for (const as of [{ role: 'Viewer' as const, tenantId: null }, { role: 'Manager' as const, tenantId: 't2' }]) {
      const token = await first.token({ role: as.role, tenantId: as.tenantId, userId: `chooser-${as.role}` });
      const closed = new Promise<number>((done) => connect(first, { token, tenantId: 't1' }).on('closed', (event: any) => done(event.code)));
      expect(await closed).toBe(4403);
    }
    const token = await first.token({ role: 'Admin', userId: 'platform-operator' });
    const admin = connect(first, { token, 'X-Tenant-ID': 't-entered' });
    const changes: any[] = [];
    const before = subscribers(first);
    admin.subscribe({ query: 'subscription { modelChanges(model: "Company") { tenantId } }' }, {
      next: (message) => changes.push(message.data?.modelChanges), error: () => undefined, complete: () => undefined,
    });
    await live(first, before);
    await create(await clientFor(first, { role: 'Manager', tenantId: 'other-tenant' }), 'Company', { name: 'Elsewhere' });
    await create(await clientFor(first, { role: 'Manager', tenantId: 't-entered' }), 'Company', { name: 'Entered' });
    const deadline = Date.now() + 5000;
    while (changes.length < 1 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 25));
    expect(changes).toEqual([{ tenantId: 't-entered' }]);
  });

  it('delivers committed changes across instances, filtered by model and tenant', async () => {
    const companies = await subscribe(first, { role: 'Manager', tenantId: 't1' }, 'Company');
    const everything = await subscribe(first, { role: 'Manager', tenantId: 't1' }, null, 'authorization');
    const otherTenant = await subscribe(first, { role: 'Manager', tenantId: 't2' }, 'Company');
    const writer = await clientFor(second, { role: 'Manager', tenantId: 't1' });
    const company = await create(writer, 'Company', { name: 'Live' });
    const contact = await create(writer, 'Contact', { name: 'Live', stage: 'lead' });
    await writer('mutation($id: ID!) { delete(model: "Company", id: $id) }', { id: company.id });

    const got = await companies.until(2);
    expect(got.map((c) => [c.eventType, c.modelName, c.recordId, c.tenantId])).toEqual([
      ['Created', 'Company', company.id, 't1'], ['Deleted', 'Company', company.id, 't1'],
    ]);
    expect(got[0].eventId).toMatch(/^[0-9A-Z]{26}$/);
    const all = await everything.until(3);
    expect(all.map((c) => c.modelName)).toEqual(['Company', 'Contact', 'Company']);
    expect(all[1].recordId).toBe(contact.id);
    await new Promise((done) => setTimeout(done, 200));
    expect(otherTenant.changes).toEqual([]);
  });

  it('filters by read access and refuses models the caller may not read', async () => {
    const viewerAll = await subscribe(first, { role: 'Viewer' }, null);
    const denied = await subscribe(first, { role: 'Viewer' }, 'Secret');
    const unknown = await subscribe(first, { role: 'Admin' }, 'Nope');
    const writer = await clientFor(second, { role: 'Manager' });
    await create(writer, 'Secret', { label: 'hidden' });
    await create(writer, 'Company', { name: 'Seen' });
    const got = await viewerAll.until(1);
    await new Promise((done) => setTimeout(done, 200));
    expect(got.map((c) => c.modelName)).toEqual(['Company']);
    expect(denied.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(unknown.errors[0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'model' });
  });
});

describe('modelChanges(after)', () => {
  const FIELDS = 'eventType modelName eventId recordId tenantId';

  async function subscribeAfter(service: TestService, tenantId: string, after: string | null): Promise<Feed & { client: Client }> {
    const token = await service.token({ role: 'Manager', tenantId });
    const client = connect(service, { token });
    const feed = { changes: [] as any[], errors: [] as any[] };
    client.subscribe({ query: `subscription($after: ID) { modelChanges(model: "Company", after: $after) { ${FIELDS} } }`, variables: { after } }, {
      next: (message) => (message.errors ? feed.errors.push(...message.errors) : feed.changes.push(message.data!.modelChanges)),
      error: (error) => feed.errors.push(error),
      complete: () => undefined,
    });
    await new Promise<void>((done) => client.on('connected', () => done()));
    return {
      ...feed, client,
      async until(count) {
        const deadline = Date.now() + 5000;
        while (feed.changes.length < count && feed.errors.length === 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 10));
        return feed.changes;
      },
    };
  }

  it('replays what the client missed since `after`, then goes live: no gap, no duplicate at the seam', async () => {
    const writer = await clientFor(second, { role: 'Manager', tenantId: 'r1' });
    const elsewhere = await clientFor(second, { role: 'Manager', tenantId: 'r2' });
    const before = subscribers(first);
    const current = await subscribeAfter(first, 'r1', null);
    await live(first, before); // graphql-ws registers the subscription after 'connected'
    const seen = await create(writer, 'Company', { name: 'Seen' });
    const [received] = await current.until(1);
    expect(received.recordId).toBe(seen.id);
    await current.client.dispose();

    const missed = [];
    for (let i = 0; i < 3; i++) missed.push((await create(writer, 'Company', { name: `Missed ${i}` })).id);
    await create(elsewhere, 'Company', { name: 'Other tenant' });
    // Writes keep landing while the client resubscribes: the seam is crossed under load.
    const during = Promise.all(Array.from({ length: 10 }, (_, i) => create(writer, 'Company', { name: `During ${i}` })));
    const resumed = await subscribeAfter(first, 'r1', received.eventId);
    const concurrent = (await during).map((row) => row.id);
    const after = (await create(writer, 'Company', { name: 'Live again' })).id;
    const expected = [...missed, ...concurrent, after];
    const got = await resumed.until(expected.length);
    await new Promise((done) => setTimeout(done, 200)); // nothing more may arrive
    expect(resumed.errors).toEqual([]);
    expect(resumed.changes.map((c) => c.recordId).sort()).toEqual([...expected].sort());
    expect(got.slice(0, 3).map((c) => c.recordId)).toEqual(missed);
    expect(got.at(-1).recordId).toBe(after);
    expect(new Set(got.map((c) => c.eventId)).size).toBe(got.length);
    expect(got.every((c) => c.tenantId === 'r1')).toBe(true);
  });

  it('refuses an unknown eventId and one of another tenant, naming the field', async () => {
    const writer = await clientFor(second, { role: 'Manager', tenantId: 'r2' });
    await create(writer, 'Company', { name: 'Theirs' });
    const theirs = await second.ctx.db.one(`select id from svc_events where tenant_id = 'r2' order by seq desc limit 1`);
    for (const after of ['01NOTANEVENT0000000000000', theirs.id]) {
      const feed = await subscribeAfter(first, 'r1', after);
      const deadline = Date.now() + 5000;
      while (feed.errors.length === 0 && Date.now() < deadline) await new Promise((done) => setTimeout(done, 10));
      expect(feed.errors[0].extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'after' });
    }
  });
});
