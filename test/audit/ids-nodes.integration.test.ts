/**
 * Audit ids made on several Citus nodes (audit migration 0007, ADR 025 "The
 * audit id"). Citus keeps a bigint sequence unique across nodes by giving node
 * group g the range (g << 48) + 1 .. (g + 1) << 48 (AlterSequenceMinMax,
 * worker_data_fetch_protocol.c): the ranges differ above bit 48 only. The id
 * folds the range's group into its low bits, so two nodes never make the same
 * id in one millisecond, and the millisecond stays above every low bit, so id
 * order is time order. Without a Citus node, a node is its sequence's range:
 * the layout is checked on `svc_audit_id_of(ms, s)` with the values each node's
 * sequence hands out, and a database whose sequence has a worker's range (as
 * Citus sets it) writes ids through the runtime.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuditLog } from '../../runtime/audit/log.ts';
import { pageEntries } from '../../runtime/audit/query.ts';
import { firstIdAt, ID_EPOCH_MS, ID_LOW_BITS } from '../../runtime/audit/rollup.ts';
import { openDatabase, type Database } from '../../runtime/db/index.ts';
import { TenantScope } from '../../runtime/tenancy/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let database: TestDatabase;
let opened: Database;

beforeAll(async () => {
  database = await createTestDatabase('svc_t_audit_nodes', { fixture: 'crm' });
  opened = await openDatabase({ url: database.url, poolSize: 4 });
}, 60_000);
afterAll(async () => {
  await opened?.close();
  await database?.drop();
});

/** The first value Citus gives node group `group`'s copy of a bigint sequence. */
const rangeStart = (group: number) => (BigInt(group) << 48n) + 1n;
/** 0005's layout: the millisecond, then the sequence's low 22 bits. */
const before0007 = (ms: bigint, s: bigint) => ((ms - BigInt(ID_EPOCH_MS)) << 22n) | (s & 4_194_303n);

/** `svc_audit_id_of(ms, s)` for every s of each group's first `n` values, all at `ms`. */
async function idsAt(ms: bigint, groups: readonly number[], n: number): Promise<Array<{ group: number; id: bigint }>> {
  const rows = await opened.db.any<{ g: number; id: string }>(`
    select g, svc_audit_id_of($1::bigint, ((g::bigint << 48) + k))::text as id
      from unnest($2::int[]) g, generate_series(1, $3::int) k`, [ms.toString(), groups, n]);
  return rows.map((r) => ({ group: r.g, id: BigInt(r.id) }));
}

describe('audit ids on several Citus nodes', { timeout: 60_000 }, () => {
  it('never meet in one millisecond: each node\'s range is in the low bits (where 0005\'s layout made the same ids)', async () => {
    const ms = BigInt(Date.now());
    const groups = [0, 1, 2, 5, 63];
    const made = await idsAt(ms, groups, 65_536);
    expect(made).toHaveLength(groups.length * 65_536);
    expect(new Set(made.map((m) => m.id)).size).toBe(made.length);
    for (const { group, id } of made.filter((_, i) => i % 997 === 0)) {
      expect(Number((id >> 16n) & 63n)).toBe(group);
      expect(id >> BigInt(ID_LOW_BITS)).toBe(ms - BigInt(ID_EPOCH_MS));
    }
    // 0005's layout: the coordinator's and group 1's k-th values have the same low 22 bits.
    expect(before0007(ms, 7n)).toBe(before0007(ms, rangeStart(1) + 6n));
  });

  it('keep time order across nodes: every id of a millisecond is above every id of the one before, whatever the node', async () => {
    const ms = BigInt(Date.now());
    const earlier = await idsAt(ms, [0, 63], 65_536);
    const later = await idsAt(ms + 1n, [0, 63], 1);
    const highest = earlier.reduce((max, m) => (m.id > max ? m.id : max), 0n);
    for (const { id } of later) {
      expect(id).toBeGreaterThan(highest);
      expect(id).toBe(firstIdAt(Number(ms + 1n)) | (id & ((1n << BigInt(ID_LOW_BITS)) - 1n)));
    }
  });

  it('are what svc_audit_next_id() writes on a node whose sequence has a worker\'s range, through the runtime', async () => {
    const { db } = opened;
    const coordinator = BigInt((await db.one(`select svc_audit_next_id()::text as id`)).id);
    expect(Number((coordinator >> 16n) & 63n)).toBe(0);
    // What Citus's AlterSequenceMinMax does to the sequence on a worker of group 3.
    const start = rangeStart(3);
    await db.none(`alter sequence svc_audit_id_low minvalue ${start} maxvalue ${start + (1n << 48n)} start ${start} restart ${start}`);
    const log = createAuditLog(db, { policy: 'full', trustForwardedFor: false }, pino({ level: 'silent' }));
    const started = Date.now();
    await db.tx((t) => log.record(t, [1, 2, 3].map((n) => ({
      action: 'record.update' as const, tenantId: 'nodes-a', actor: { kind: 'user' as const, id: 'u', role: 'Manager' }, entityType: 'Company', entityId: `c${n}`,
    }))));
    const rows = await db.any<{ id: string }>(`select id::text as id from svc_audit where tenant_id = 'nodes-a' order by id`);
    const ids = rows.map((r) => BigInt(r.id));
    expect(ids).toHaveLength(3);
    for (const [i, id] of ids.entries()) {
      expect(Number((id >> 16n) & 63n)).toBe(3);
      expect(id & 65_535n).toBe(BigInt(i + 1));
      const ms = Number(id >> BigInt(ID_LOW_BITS)) + ID_EPOCH_MS;
      expect(ms).toBeGreaterThanOrEqual(started - 5_000);
      expect(ms).toBeLessThanOrEqual(Date.now() + 5_000);
      expect(id).toBeGreaterThan(coordinator);
    }
    // The route's keyset reads them newest first.
    const page = await pageEntries(db, TenantScope.of('nodes-a'), {}, { limit: 10 });
    expect(page.items.map((item) => BigInt(item.id))).toEqual([...ids].reverse());
  });
});
