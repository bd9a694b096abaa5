/**
 * The feed's two cursors (ADR 025 decision 4) on a real Postgres: `global`
 * ((tx, seq), one node) and `tenant` ((tenant, tenant_seq), Citus). In both:
 * every change is delivered exactly once to every consumer (live subscribers
 * on two instances, a durable consumer shared by both), in commit order per
 * tenant, with concurrent writers in one tenant and across many; a writer
 * killed between two commits; a durable consumer restarted mid-stream; and a
 * position of the other mode refused with VALIDATION_ERROR.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePosition, type ConsumerHandle, type DurableConsumer } from '../../runtime/feed/index.ts';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, UPDATE, startRecordsService, type Gql } from '../records/helpers.ts';
import { collect, insertEvent, until, connect as connectPg, type Collector } from './helpers.ts';

type Mode = 'global' | 'tenant';
const STREAMS = ['Counter', 'Crash'];

/** Creates a Counter, then updates it `updates` times: the create's one-statement path, then transactions. */
async function writer(gql: Gql, updates: number): Promise<void> {
  const row = await create(gql, 'Counter', { value: 0 });
  for (let i = 1; i <= updates; i++) {
    const r = await gql(UPDATE, { model: 'Counter', id: row.id, data: { value: i } });
    if (r.errors) throw new Error(JSON.stringify(r.errors));
  }
}

/** Effects of a durable consumer: one row per change, keyed so that a duplicate fails the batch. */
function recorder(name: string, batchSize = 7): DurableConsumer {
  return {
    name, streams: STREAMS, batchSize,
    async handle(changes, t) {
      for (const c of changes) {
        await t.none('insert into effects (consumer, event_id, tenant_id) values ($1, $2, $3)', [name, c.eventId, c.tenantId]);
      }
    },
  };
}

describe.each(['global', 'tenant'] as const)('feed cursor %s', (mode: Mode) => {
  let a: TestService;
  let b: TestService;
  const env = { SVC_FEED_CURSOR: mode };

  beforeAll(async () => {
    a = await startRecordsService({ env });
    b = await startRecordsService({ database: a.database, env });
    await a.ctx.db.none(`create table effects (ord bigserial, consumer text not null, event_id text not null, tenant_id text,
      primary key (consumer, event_id))`);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  /** The changes of `tenants` in the order the mode promises per tenant: tenant_seq, or (tx, seq). */
  async function committed(tenants: string[]): Promise<Map<string, string[]>> {
    const order = mode === 'tenant' ? 'tenant_seq' : 'tx, seq';
    const rows = await a.ctx.db.any(`select id, tenant_id, tenant_seq from svc_events
      where tenant_id = any($1) and stream_type = any($2) order by tenant_id, ${order}`, [tenants, STREAMS]);
    const byTenant = new Map<string, string[]>(tenants.map((t) => [t, []]));
    for (const row of rows) byTenant.get(row.tenant_id)!.push(row.id);
    if (mode === 'tenant') {
      // Gapless per tenant: 1..n, no repeat.
      for (const tenant of tenants) {
        const seqs = rows.filter((r) => r.tenant_id === tenant).map((r) => Number(r.tenant_seq));
        expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      }
    } else {
      expect(rows.every((r) => r.tenant_seq === null)).toBe(true); // global mode writes no position
    }
    return byTenant;
  }

  function perTenant(changes: ReadonlyArray<{ eventId: string; tenantId: string | null }>, tenants: string[]): Map<string, string[]> {
    const byTenant = new Map<string, string[]>(tenants.map((t) => [t, []]));
    for (const c of changes) byTenant.get(c.tenantId ?? '')?.push(c.eventId);
    return byTenant;
  }

  const effects = (name: string, tenants: string[]) =>
    a.ctx.db.any<{ eventId: string; tenantId: string | null }>(
      'select event_id as "eventId", tenant_id as "tenantId" from effects where consumer = $1 and tenant_id = any($2) order by ord', [name, tenants]);

  /** Runs `write`, with two live subscribers (one per instance) and one durable consumer on both; checks each got every change once, in order. */
  async function deliveredOnceInOrder(label: string, tenants: string[], write: () => Promise<void>): Promise<void> {
    const subscribers: Collector[] = [a, b].map((s) => collect(s.ctx.services.feed, { streams: STREAMS, maxQueued: 100_000 }));
    const name = `${mode}-${label}`;
    const consumers: ConsumerHandle[] = [
      await a.ctx.services.feed.consume(recorder(name)), await b.ctx.services.feed.consume(recorder(name)),
    ];
    try {
      await write();
      const expected = await committed(tenants);
      const total = [...expected.values()].reduce((n, ids) => n + ids.length, 0);
      const got = (c: Collector) => c.changes.filter((x) => tenants.includes(x.tenantId ?? '')).length;
      await until(() => subscribers.every((c) => got(c) >= total), 'every change at both subscribers', 30_000);
      await until(async () => (await effects(name, tenants)).length >= total, 'every change at the durable consumer', 30_000);
      for (const consumer of consumers) await consumer.drain();
      for (const c of subscribers) {
        expect(c.error).toBeNull();
        expect(perTenant(c.changes, tenants)).toEqual(expected);
      }
      expect(perTenant(await effects(name, tenants), tenants)).toEqual(expected);
      expect(consumers.reduce((n, c) => n + c.stats().failures, 0)).toBe(0);
    } finally {
      for (const c of subscribers) c.subscription.close();
      for (const consumer of consumers) await consumer.stop();
    }
  }

  it('(a) concurrent writers in ONE tenant: every change once, in order, at every consumer', async () => {
    const tenant = `one-${mode}`;
    const clients = await Promise.all([a, b, a, b, a, b, a, b].map((s) => clientFor(s, { role: 'Manager', tenantId: tenant })));
    await deliveredOnceInOrder('one', [tenant], async () => {
      await Promise.all(clients.map((gql) => Promise.all([writer(gql, 4), writer(gql, 4)])));
    });
  });

  it('(b) concurrent writers across many tenants: every change once, in order per tenant', async () => {
    const tenants = Array.from({ length: 24 }, (_, i) => `many-${mode}-${i}`);
    const clients = await Promise.all(tenants.map((t, i) => clientFor(i % 2 ? a : b, { role: 'Manager', tenantId: t })));
    await deliveredOnceInOrder('many', tenants, async () => {
      await Promise.all(clients.map((gql) => writer(gql, 3)));
    });
  });

  it('(c) a writer killed between two commits: the first change once, the second never', async () => {
    const tenant = `crash-${mode}`;
    const gql = await clientFor(a, { role: 'Manager', tenantId: tenant });
    await deliveredOnceInOrder('crash', [tenant], async () => {
      await create(gql, 'Counter', { value: 1 });
      const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'tenant-writer.ts'), a.database.url, tenant, mode], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise((done) => child.on('exit', done));
      const lines = createInterface({ input: child.stdout! });
      let first = '';
      let second = '';
      // The barrier: the child's own lines, never a fixed sleep.
      for await (const line of lines) {
        if (line.startsWith('committed ')) first = line.slice(10);
        if (line.startsWith('open ')) {
          second = line.slice(5);
          break;
        }
      }
      expect(first).not.toBe('');
      expect(second).not.toBe('');
      if (mode === 'tenant') {
        // The open transaction holds the tenant's head row: the reader and consumers go on meanwhile.
        const locked = a.ctx.db.tx((t) => t.any('select 1 from svc_tenant_heads where tenant_id = $1 for update nowait', [tenant]));
        await expect(locked).rejects.toMatchObject({ code: '55P03' });
      }
      child.kill('SIGKILL');
      await exited;
      await create(gql, 'Counter', { value: 3 }); // waits for the dead backend's head lock, if it held one
      const ids = (await committed([tenant])).get(tenant)!;
      expect(ids).toContain(first);
      expect(ids).not.toContain(second);
      expect(ids).toHaveLength(3);
    });
  });

  it('a durable consumer restarted mid-stream resumes without loss or duplicate', async () => {
    const tenants = Array.from({ length: 3 }, (_, i) => `restart-${mode}-${i}`);
    const clients = await Promise.all(tenants.map((t) => clientFor(a, { role: 'Manager', tenantId: t })));
    const name = `${mode}-restart`;
    let consumer = await a.ctx.services.feed.consume(recorder(name, 3));
    const writing = Promise.all(clients.map((gql) => Promise.all([writer(gql, 6), writer(gql, 6)])));
    await until(async () => (await effects(name, tenants)).length >= 6, 'the consumer to be mid-stream', 30_000);
    await consumer.stop();
    await writing;
    consumer = await a.ctx.services.feed.consume(recorder(name, 3));
    const expected = await committed(tenants);
    const total = [...expected.values()].reduce((n, ids) => n + ids.length, 0);
    a.ctx.services.feed.poke();
    await until(async () => (await effects(name, tenants)).length >= total, 'every change after the restart', 30_000);
    await consumer.drain();
    expect(perTenant(await effects(name, tenants), tenants)).toEqual(expected);
    expect(consumer.stats().failures).toBe(0);
    await consumer.stop();
  });

  it('a subscriber from a position of this mode replays that tenant, then goes live', async () => {
    const tenant = `resume-${mode}`;
    const gql = await clientFor(a, { role: 'Manager', tenantId: tenant });
    const seen = await create(gql, 'Counter', { value: 1 });
    const seenEvent = await a.ctx.db.one('select id from svc_events where stream_id = $1', [seen.id]);
    const missed = [];
    for (let i = 0; i < 3; i++) missed.push((await create(gql, 'Counter', { value: i })).id);
    const at = await a.ctx.services.feed.positionOf(seenEvent.id);
    expect(at).not.toBeNull();
    if (mode === 'tenant') expect(at!.position).toEqual({ tenant, seq: 1 });
    const resumed = collect(b.ctx.services.feed, { from: at!.position, streams: ['Counter'], accepts: (c) => c.tenantId === tenant });
    const live = (await create(gql, 'Counter', { value: 9 })).id;
    await until(() => resumed.changes.length >= 4, 'the replay and the live change');
    expect(resumed.changes.map((c) => c.recordId)).toEqual([...missed, live]);
    resumed.subscription.close();
  });
});

describe('a position of the other mode', () => {
  let tenantMode: TestService;
  let globalMode: TestService;
  const clients: Client[] = [];

  beforeAll(async () => {
    tenantMode = await startRecordsService({ env: { SVC_FEED_CURSOR: 'tenant' } });
    globalMode = await startRecordsService({ database: tenantMode.database, env: { SVC_FEED_CURSOR: 'global' } });
    await tenantMode.ctx.db.none(`create table effects (ord bigserial, consumer text not null, event_id text not null, tenant_id text,
      primary key (consumer, event_id))`);
  });
  afterAll(async () => {
    for (const c of clients) await c.dispose();
    await globalMode?.close();
    await tenantMode?.close();
  });

  /** The first error of modelChanges(after) as `tenantId`'s Manager. */
  async function refusal(service: TestService, tenantId: string | null, after: string): Promise<any> {
    const token = await service.token({ role: 'Manager', tenantId });
    const client = createClient({ url: `${service.url.replace('http', 'ws')}/graphql/ws`, webSocketImpl: WebSocket,
      connectionParams: { token }, retryAttempts: 0, lazy: false, onNonLazyError: () => undefined });
    clients.push(client);
    return new Promise((resolve, reject) => {
      client.subscribe({ query: 'subscription($after: ID) { modelChanges(model: "Counter", after: $after) { eventId } }', variables: { after } }, {
        next: (message) => (message.errors ? resolve(message.errors[0]) : reject(new Error('a change instead of an error'))),
        error: (error) => resolve(error),
        complete: () => undefined,
      });
    });
  }

  it('answers VALIDATION_ERROR on `after`, with a message saying what to do', async () => {
    // An event written before tenant mode: no tenant_seq.
    const admin = await connectPg(tenantMode.database.url);
    const old = await insertEvent(admin, 'Counter', 'x1');
    await admin.end();
    for (const [service, after] of [
      [tenantMode, old],
      [tenantMode, encodePosition({ tx: '1000', seq: 3 })],
      [globalMode, encodePosition({ tenant: 'x1', seq: 3 })],
    ] as const) {
      const error = await refusal(service, 'x1', after);
      expect(error.extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'after' });
      expect(error.message).toMatch(/subscribe without `after` and reload/);
    }
    // A position of the right mode of another tenant is answered like an unknown one.
    const error = await refusal(tenantMode, 'x1', encodePosition({ tenant: 'x2', seq: 1 }));
    expect(error.extensions).toEqual({ code: 'VALIDATION_ERROR', field: 'after' });
  });

  it('a durable consumer moved from global to tenant mode goes on from where it was: nothing replayed', async () => {
    const gql = await clientFor(tenantMode, { role: 'Manager', tenantId: 's1' });
    const count = async () => (await tenantMode.ctx.db.one(`select count(*)::int as n from effects where consumer = 'switch'`)).n;
    const before = await globalMode.ctx.services.feed.consume(recorder('switch'));
    for (let i = 0; i < 3; i++) await create(gql, 'Counter', { value: i });
    globalMode.ctx.services.feed.poke();
    await until(async () => (await count()) >= 3, 'the global-mode consumer');
    await before.stop();
    const after = await tenantMode.ctx.services.feed.consume(recorder('switch'));
    for (let i = 0; i < 2; i++) await create(gql, 'Counter', { value: i });
    await until(async () => (await count()) >= 5, 'the tenant-mode consumer');
    await after.drain();
    expect(await count()).toBe(5);
    expect(after.stats().failures).toBe(0); // a replayed change would break the effects' key
    await after.stop();
  });
});

describe('tenant mode under SVC_HISTORY_POLICY=off', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startRecordsService({ env: { SVC_FEED_CURSOR: 'tenant', SVC_HISTORY_POLICY: 'off' } });
  });
  afterAll(async () => {
    await service?.close();
  });

  it('numbers the changes of svc_changes too, gapless, and delivers each once in that order', async () => {
    const tenant = 'off-1';
    const seen = collect(service.ctx.services.feed, { streams: ['Counter'], accepts: (c) => c.tenantId === tenant });
    const clients = await Promise.all([0, 1, 2, 3].map(() => clientFor(service, { role: 'Manager', tenantId: tenant })));
    await Promise.all(clients.map((gql) => writer(gql, 2)));
    const rows = await service.ctx.db.any(`select id, tenant_seq from svc_changes where tenant_id = $1 order by tenant_seq`, [tenant]);
    expect(rows.map((r) => Number(r.tenant_seq))).toEqual(rows.map((_, i) => i + 1));
    expect(await service.ctx.db.one(`select count(*)::int as n from svc_events where tenant_id = $1 and stream_type = 'Counter'`, [tenant]))
      .toEqual({ n: 0 });
    await until(() => seen.changes.length >= rows.length, 'every change');
    expect(seen.changes.map((c) => c.eventId)).toEqual(rows.map((r) => r.id));
    seen.subscription.close();
  });
});
