/**
 * What the feed's statistics and /storage/diagnostics say of the reader and
 * the durable consumers, in both cursor modes (ADR 025 decision 4): in
 * tenant mode positions are per tenant, so the reader reports the tenants it
 * holds a position in (no global head), and a consumer's backlog is the sum
 * over tenants of its head minus its cursor there: exact, and 0 once it has
 * handled everything, whatever its global cursor row says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAG_BOUND, ORIGIN, type ConsumerHandle, type DurableConsumer } from '../../runtime/feed/index.ts';
import { globalBacklog, heldPositions, tenantBacklog } from '../../runtime/feed/lag.ts';
import type { TestService } from '../helpers/service.ts';
import { clientFor, create, startRecordsService, UPDATE } from '../records/helpers.ts';
import { until } from './helpers.ts';

interface Report {
  feed: {
    mode: string; head: { tx: string; seq: number } | null; tenants: number | null;
    behind: number; behindIsEstimate: boolean; tenantsBehind: number | null;
    consumers: Array<{ name: string; position: { tx: string; seq: number } | null; behind: number; behindIsEstimate: boolean;
      tenantsBehind: number | null; updatedAt: string | null }>;
  };
}

const counting = (name: string, seen: string[]): DurableConsumer => ({
  name, streams: ['Counter'], batchSize: 5,
  async handle(changes) {
    seen.push(...changes.map((c) => c.eventId));
  },
});

describe.each(['global', 'tenant'] as const)('feed lag, cursor %s', (mode) => {
  let svc: TestService;
  const tenants = [`lag-${mode}-a`, `lag-${mode}-b`, `lag-${mode}-c`];

  beforeAll(async () => {
    svc = await startRecordsService({ env: { SVC_FEED_CURSOR: mode } });
  });
  afterAll(async () => svc?.close());

  async function report(): Promise<Report> {
    const token = await svc.token({ role: 'Admin' });
    const res = await fetch(`${svc.url}/storage/diagnostics`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as Report;
  }

  /** 1 create + `updates` updates of a Counter in each tenant: (1 + updates) changes per tenant. */
  async function write(updates: number): Promise<void> {
    await Promise.all(tenants.map(async (tenantId) => {
      const gql = await clientFor(svc, { role: 'Manager', tenantId });
      const row = await create(gql, 'Counter', { value: 0 });
      for (let i = 1; i <= updates; i++) {
        const r = await gql(UPDATE, { model: 'Counter', id: row.id, data: { value: i } });
        if (r.errors) throw new Error(JSON.stringify(r.errors));
      }
    }));
  }

  it('a stopped consumer is behind by exactly what was written since, per tenant summed; a drained one by nothing', async () => {
    const feed = svc.ctx.services.feed;
    expect(feed.mode).toBe(mode);
    const seenIdle: string[] = [];
    const seenLive: string[] = [];
    // Both start now; `idle` is stopped before the writes, `live` handles them.
    const idle: ConsumerHandle = await feed.consume(counting(`lag-idle-${mode}`, seenIdle));
    await idle.drain();
    await idle.stop();
    const live = await feed.consume(counting(`lag-live-${mode}`, seenLive));
    try {
      await write(3);
      await until(() => seenLive.length >= 12, 'the live consumer to handle every change', 20_000);
      await live.drain();
      const delivered = feed.stats().delivered;
      await until(async () => (await feed.backlog()).behind === 0 && feed.stats().delivered >= delivered, 'the reader to catch up');

      const r = await report();
      expect(r.feed.mode).toBe(mode);
      const idleLag = r.feed.consumers.find((c) => c.name === `lag-idle-${mode}`)!;
      const liveLag = r.feed.consumers.find((c) => c.name === `lag-live-${mode}`)!;
      // 4 changes in each of 3 tenants since `idle` stopped; nothing else is written meanwhile.
      expect(idleLag).toMatchObject({ behind: 12, behindIsEstimate: false });
      expect(liveLag).toMatchObject({ behind: 0, behindIsEstimate: false });
      expect(r.feed).toMatchObject({ behind: 0, behindIsEstimate: false });
      expect((await feed.consumerBacklog(`lag-idle-${mode}`, idleLag.position ?? { tx: '0', seq: 0 })).byStream.get('Counter')).toBe(12);
      if (mode === 'tenant') {
        // Positions are per tenant: no global head or cursor is reported as if it meant something.
        expect(r.feed.head).toBeNull();
        expect(r.feed.tenants).toBeGreaterThanOrEqual(tenants.length);
        expect(r.feed.tenantsBehind).toBe(0);
        expect(idleLag).toMatchObject({ position: null, tenantsBehind: 3 });
        expect(liveLag).toMatchObject({ position: null, tenantsBehind: 0 });
        expect(Date.parse(liveLag.updatedAt!)).toBeGreaterThan(Date.parse(idleLag.updatedAt ?? '1970-01-01T00:00:00Z'));
      } else {
        expect(r.feed.head!.tx).toMatch(/^\d+$/);
        expect(r.feed).toMatchObject({ tenants: null, tenantsBehind: null });
        expect(idleLag.position!.tx).toMatch(/^\d+$/);
        expect(idleLag.tenantsBehind).toBeNull();
      }

      // The idle consumer, run again, catches up: behind 0.
      const resumed = await feed.consume(counting(`lag-idle-${mode}`, seenIdle));
      await resumed.drain();
      await resumed.stop();
      expect(seenIdle).toHaveLength(12);
      const after = (await report()).feed.consumers.find((c) => c.name === `lag-idle-${mode}`)!;
      expect(after).toMatchObject({ behind: 0, behindIsEstimate: false });
    } finally {
      await live.stop();
    }
  });

  it('the reader\'s backlog: what lies beyond its positions, from the heads (tenant) or the log after its head (global)', async () => {
    const feed = svc.ctx.services.feed;
    await write(0);
    await until(async () => (await feed.backlog()).behind === 0, 'the reader to read the three creates');
    // From the start of the log instead of the reader's positions: every change written, in each mode's terms.
    const all = await svc.ctx.db.one<{ n: number; tenants: number }>(mode === 'tenant'
      ? 'select count(*)::int as n, count(distinct tenant_id)::int as tenants from svc_events where tenant_seq is not null'
      : 'select count(*)::int as n, 0 as tenants from svc_events');
    const fromStart = mode === 'tenant' ? await tenantBacklog(svc.ctx.db, heldPositions(new Map())) : await globalBacklog(svc.ctx.db, ORIGIN);
    expect(fromStart).toMatchObject({ behind: all.n, behindIsEstimate: false, tenantsBehind: mode === 'tenant' ? all.tenants : null });
    expect([...fromStart.byStream.values()].reduce((a, b) => a + b, 0)).toBe(all.n);
    if (mode === 'tenant') {
      // Every tenant at its head but one, 2 short of it: 2 behind, in 1 tenant.
      const heads = await svc.ctx.db.any<{ tenant_id: string; last_seq: string }>('select tenant_id, last_seq from svc_tenant_heads');
      const positions = new Map(heads.map((h) => [h.tenant_id, Number(h.last_seq) - (h.tenant_id === tenants[0] ? 2 : 0)]));
      expect(await tenantBacklog(svc.ctx.db, heldPositions(positions))).toMatchObject({ behind: 2, tenantsBehind: 1, byStreamIsPartial: false });
    }
  });

  it('past LAG_BOUND: the count stays bounded (tenant: exact from the heads), and the log is read by index, never scanned', async () => {
    const db = svc.ctx.db;
    // 200 tenants x 100 changes (tenant mode: with their heads), 60 of each beyond the positions read below.
    const before = svc.ctx.services.feed.head;
    await db.none(`insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id, tenant_seq)
      select 'lagscale-' || t || '-' || s, 'Counter', 'lagscale-' || t || '-' || s, 1, 'Created', '{}'::jsonb, 'test',
             'lagscale-${mode}-' || t, case when $1 then s end
        from generate_series(1, 200) t, generate_series(1, 100) s`, [mode === 'tenant']);
    if (mode === 'tenant') {
      await db.none(`insert into svc_tenant_heads (tenant_id, last_seq) select 'lagscale-${mode}-' || t, 100 from generate_series(1, 200) t`);
    }
    await db.none('analyze svc_events; analyze svc_tenant_heads');
    const sent: Array<{ text: string; values: unknown[] }> = [];
    const recording = {
      one: (q: { text: string; values: unknown[] }) => db.one(q),
      manyOrNone: (q: { text: string; values: unknown[] }) => (sent.push(q), db.manyOrNone(q)),
    } as unknown as typeof db;
    let backlog;
    if (mode === 'tenant') {
      const heads = await db.any<{ tenant_id: string; last_seq: string }>('select tenant_id, last_seq from svc_tenant_heads');
      const positions = new Map(heads.map((h) => [h.tenant_id, h.tenant_id.startsWith('lagscale-') ? 40 : Number(h.last_seq)]));
      backlog = await tenantBacklog(recording, heldPositions(positions));
      expect(backlog).toMatchObject({ behind: 12_000, behindIsEstimate: false, tenantsBehind: 200, byStreamIsPartial: true });
    } else {
      backlog = await globalBacklog(recording, before);
      expect(backlog).toMatchObject({ behind: LAG_BOUND, behindIsEstimate: true, tenantsBehind: null, byStreamIsPartial: true });
    }
    expect([...backlog.byStream.values()].reduce((a, b) => a + b, 0)).toBe(LAG_BOUND);
    expect(sent).toHaveLength(1);
    const [plan] = await db.any<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(`explain (format json) ${sent[0].text}`, sent[0].values);
    const all = [...nodes(plan['QUERY PLAN'][0].Plan)];
    expect(all.filter((n) => n['Relation Name'] === 'svc_events').map((n) => n['Node Type'])).not.toContain('Seq Scan');
    // Tenant mode: each behind tenant's changes through its (tenant_id, tenant_seq) index; global: the (tx, seq) walk.
    expect(all.map((n) => n['Index Name'])).toContain(mode === 'tenant' ? 'svc_events_tenant_position' : 'svc_events_tx_seq');
  });
});

interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly Plans?: readonly PlanNode[];
}

function* nodes(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}
