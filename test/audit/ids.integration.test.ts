/**
 * The audit entry's id (audit migration 0005, ADR 025): written by the
 * runtime, time-ordered, no identity. A database whose entries have identity
 * ids is converted in place: its ids and the cursors that name them stay
 * valid, every new id sorts after them, pages run across both, and the fold
 * goes on counting every entry once.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldAuditRollups } from '../../runtime/audit/index.ts';
import { createAuditLog } from '../../runtime/audit/log.ts';
import { decodeCursor, encodeCursor, pageEntries, statistics } from '../../runtime/audit/query.ts';
import { firstIdAt, ID_EPOCH_MS, ID_LOW_BITS } from '../../runtime/audit/rollup.ts';
import { rollupStatistics } from '../../runtime/audit/statistics.ts';
import type { AuditEntryInput } from '../../runtime/audit/types.ts';
import { openDatabase, type Database } from '../../runtime/db/index.ts';
import { migrate } from '../../runtime/db/migrate/index.ts';
import type { MigrationSet } from '../../runtime/db/migrate/files.ts';
import { TenantScope } from '../../runtime/tenancy/index.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

const MIGRATIONS = fileURLToPath(new URL('../../runtime/audit/migrations/', import.meta.url));
const CONVERSION = '0005_time_ordered_ids.sql';
/** The conversion and the audit migrations after it (0007 changes the id's low bits: ids-nodes.integration.test.ts). */
const LATER = readdirSync(MIGRATIONS).filter((file) => file >= CONVERSION).sort();
const DAY = 86_400_000;

let database: TestDatabase;
let opened: Database;
let root: string;
let set: MigrationSet;

beforeAll(async () => {
  database = await createTestDatabase('svc_t_audit_ids');
  opened = await openDatabase({ url: database.url, poolSize: 4 });
  root = mkdtempSync(join(tmpdir(), 'svc-audit-ids-'));
  set = { scope: 'runtime:audit', dir: root };
  // The audit capability's migrations up to before the conversion: the identity hands out ids.
  cpSync(MIGRATIONS, root, { recursive: true });
  for (const file of LATER) rmSync(join(root, file));
  expect(await migrate(opened.db, [set])).toEqual(readdirSync(root).sort().map((f) => `runtime:audit/${f}`));
});
afterAll(async () => {
  await opened?.close();
  await database?.drop();
  if (root) rmSync(root, { recursive: true, force: true });
});

const ids = async (where = 'true') =>
  (await opened.db.any<{ id: string }>(`select a.id::text as id from svc_audit a where ${where} order by a.id`)).map((r) => BigInt(r.id));

const entry = (tenantId: string, n: number): AuditEntryInput => ({
  action: 'record.update', tenantId, actor: { kind: 'user', id: `actor-${n % 3}`, role: 'Manager' },
  entityType: 'Company', entityId: `c${n}`, changes: { n: [n - 1, n] },
});

/** Every page of a scope, `limit` entries each, from an optional cursor: the ids in the order the route returns them. */
async function pageAll(tenant: string, limit: number, cursor?: string): Promise<bigint[]> {
  const seen: bigint[] = [];
  let before = cursor === undefined ? undefined : decodeCursor(cursor) ?? undefined;
  for (;;) {
    const page = await pageEntries(opened.db, TenantScope.of(tenant), {}, { limit, before });
    seen.push(...page.items.map((item) => BigInt(item.id)));
    if (page.nextCursor === null) return seen;
    before = decodeCursor(page.nextCursor) ?? undefined;
  }
}

describe('audit ids: from the identity to time-ordered ids written by the runtime', () => {
  it('converts a database with identity ids in place, keeps them and their cursors, and orders every new id after them', async () => {
    const { db } = opened;
    // The old build: the identity numbers entries 1, 2, 3, ... (two tenants, one of them the global scope).
    await db.none(`insert into svc_audit (tenant_id, actor_kind, actor_id, action, entity_type, entity_id, outcome)
      select case when g % 3 = 0 then '' else 'ids-a' end, 'user', 'actor-' || (g % 3), 'record.create', 'Company', 'old' || g, 'success'
        from generate_series(1, 30) g`);
    const old = await ids();
    expect(old).toEqual(Array.from({ length: 30 }, (_, i) => BigInt(i + 1)));
    // The old fold had passed part of them (its watermark an identity id): the first 12, in id order.
    await foldAuditRollups(db, { batch: 12, maxBatches: 1, settleMs: 0 });
    expect((await db.one(`select folded_to::text as f from svc_audit_rollup_state`)).f).toBe('12');
    const oldCursor = encodeCursor(old[20]);

    for (const file of LATER) cpSync(join(MIGRATIONS, file), join(root, file));
    expect(await migrate(db, [set])).toEqual(LATER.map((file) => `runtime:audit/${file}`));

    // No identity; the default is the runtime's own function, for instances of earlier builds
    // (which leave the id to the column) during a rolling deploy: their entry gets a time-ordered id.
    const column = await db.one(`select a.attidentity as identity, pg_get_expr(d.adbin, d.adrelid) as "default"
      from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where a.attrelid = 'svc_audit'::regclass and a.attname = 'id'`);
    expect(column).toEqual({ identity: '', default: 'svc_audit_next_id()' });
    const before = await db.one<{ id: string }>(
      `insert into svc_audit (tenant_id, actor_kind, action, outcome) values ('ids-a', 'system', 'x', 'success') returning id::text as id`);
    expect(BigInt(before.id)).toBeGreaterThan(BigInt(old.at(-1)!));
    await db.none('delete from svc_audit where id = $1', [before.id]);
    const state = await db.any(`select column_name from information_schema.columns where table_name = 'svc_audit_rollup_state' order by 1`);
    expect(state.map((r) => r.column_name)).not.toContain('marks_id');
    expect(await ids()).toEqual(old);

    // The new build writes entries one transaction after another: each id above every earlier one.
    const log = createAuditLog(db, { policy: 'full', trustForwardedFor: false }, pino({ level: 'silent' }));
    const started = Date.now();
    for (let n = 1; n <= 20; n++) await db.tx((t) => log.record(t, entry(n % 4 === 0 ? '' : 'ids-a', n)));
    // Several in one statement too (the records' updateMany writes one INSERT).
    await db.tx((t) => log.record(t, [21, 22, 23].map((n) => entry('ids-a', n))));
    const fresh = await ids(`entity_id not like 'old%'`);
    expect(fresh).toHaveLength(23);
    const written = await db.any<{ id: string; entity_id: string; ms: string }>(`
      select id::text as id, entity_id, floor(extract(epoch from occurred_at) * 1000)::bigint::text as ms
        from svc_audit where entity_id not like 'old%' order by substr(entity_id, 2)::int`);
    const order = written.map((r) => BigInt(r.id));
    for (let i = 1; i < order.length; i++) expect(order[i], written[i].entity_id).toBeGreaterThan(order[i - 1]);
    expect(order[0]).toBeGreaterThan(old[old.length - 1]);
    // The id's high bits are the millisecond it was made at, on the database's clock: within the test's run.
    for (const row of written) {
      const ms = Number(BigInt(row.id) >> BigInt(ID_LOW_BITS)) + ID_EPOCH_MS;
      expect(ms).toBeGreaterThanOrEqual(Number(row.ms));
      expect(ms).toBeGreaterThanOrEqual(started - 5_000);
      expect(ms).toBeLessThanOrEqual(Date.now() + 5_000);
      expect(BigInt(row.id)).toBeGreaterThanOrEqual(firstIdAt(Number(row.ms)));
    }

    // Pages, newest first, across new and old ids: each entry once, in id order; an old cursor resumes where it was.
    const a = await ids(`tenant_id = 'ids-a'`);
    expect(await pageAll('ids-a', 4)).toEqual([...a].reverse());
    expect(await pageAll('ids-a', 4, oldCursor)).toEqual(a.filter((id) => id < old[20]).reverse());
    const global = await ids(`tenant_id = ''`);
    expect(await pageAll('', 3)).toEqual([...global].reverse());

    // The fold goes on from its identity watermark: every entry, old and new, counted once.
    for (let i = 0; i < 50 && BigInt((await db.one(`select folded_to::text as f from svc_audit_rollup_state`)).f) < fresh[22]; i++) {
      await foldAuditRollups(db, { batch: 10, settleMs: 0 });
    }
    const rolled = await db.one(`select (select coalesce(sum(entries), 0)::int from svc_audit_daily) as daily,
      (select coalesce(sum(entries), 0)::int from svc_audit_daily_actors) as actors`);
    expect(rolled).toEqual({ daily: 53, actors: 53 });
    const range = { from: new Date(Math.floor(Date.now() / DAY) * DAY - DAY), to: new Date(Date.now() + DAY) };
    for (const tenant of ['ids-a', '']) {
      const scope = TenantScope.of(tenant === '' ? null : tenant);
      const direct = await statistics(db, scope, range);
      expect(direct.total).toBe(tenant === '' ? 10 + 5 : 20 + 18);
      expect(await rollupStatistics(db, scope, range)).toEqual(direct);
    }
  });
});
