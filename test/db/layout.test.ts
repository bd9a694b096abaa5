/**
 * Layout 3 (ADR 025, issue 30) on a real Postgres: the runtime's distributed
 * tables (svc_events, svc_changes, svc_audit, svc_media, svc_media_blobs)
 * have a NOT NULL tenant_id and keys that lead with it; the global scope is
 * stored as '' and still answered as tenantId null over HTTP and GraphQL;
 * the global scope and a tenant never see each other's rows; and the
 * conversion migrations turn a database of the old layout, NULL tenants
 * included, into the new one without losing a row.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, type MigrationSet } from '../../runtime/db/migrate/index.ts';
import type { Db } from '../../runtime/db/types.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import type { TestService } from '../helpers/service.ts';
import { openDb } from '../migrate/helpers.ts';
import { clientFor, create, RECORD, RECORDS, startRecordsService, type Gql } from '../records/helpers.ts';

const DISTRIBUTED = ['svc_events', 'svc_changes', 'svc_audit', 'svc_media', 'svc_media_blobs'];

/** The capabilities whose migrations convert, and the file that converts each. */
const CONVERTED = [
  { scope: 'runtime:events', capability: 'events', file: '0006_layout3.sql' },
  { scope: 'runtime:audit', capability: 'audit', file: '0003_layout3.sql' },
  { scope: 'runtime:media', capability: 'media', file: '0005_layout3.sql' },
];

const runtimeMigrations = (capability: string) => fileURLToPath(new URL(`../../runtime/${capability}/migrations/`, import.meta.url));

interface Key { readonly name: string; readonly primary: boolean; readonly columns: string[] }

/** The unique indexes (primary key included) of `table`, with their key columns in order (an expression reads as no column). */
async function uniqueKeys(db: Db, table: string): Promise<Key[]> {
  return db.manyOrNone<Key>(`
    select c.relname as name, i.indisprimary as primary,
           array(select coalesce(a.attname, '(expression)') from unnest(i.indkey) with ordinality k(n, o)
                   left join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.n
                  where o <= i.indnkeyatts order by o)::text[] as columns
      from pg_index i join pg_class c on c.oid = i.indexrelid
     where i.indrelid = $1::regclass and i.indisunique order by c.relname`, [table]);
}

const PRIMARY_KEYS: Record<string, string[]> = {
  svc_events: ['tenant_id', 'seq'],
  svc_changes: ['tenant_id', 'seq'],
  svc_audit: ['tenant_id', 'id'],
  svc_media: ['tenant_id', 'id'],
  svc_media_blobs: ['tenant_id', 'sha256'],
};

/** Layout 3 on every distributed runtime table: NOT NULL tenant, no default, keys that lead with it. */
async function expectLayout3(db: Db): Promise<void> {
  for (const table of DISTRIBUTED) {
    const column = await db.one<{ notnull: boolean; hasdefault: boolean }>(`
      select attnotnull as notnull, atthasdef as hasdefault from pg_attribute
       where attrelid = $1::regclass and attname = 'tenant_id'`, [table]);
    expect(column, table).toEqual({ notnull: true, hasdefault: false });
    const keys = await uniqueKeys(db, table);
    expect(keys.filter((k) => k.primary).map((k) => k.columns), table).toEqual([PRIMARY_KEYS[table]]);
    // Citus refuses a unique key without the distribution column: every one leads with it.
    for (const key of keys) expect(key.columns[0], `${table}.${key.name}`).toBe('tenant_id');
  }
  const version = (await uniqueKeys(db, 'svc_events')).find((k) => k.name === 'svc_events_stream_version');
  expect(version?.columns).toEqual(['tenant_id', 'stream_type', 'stream_id', 'version']);
  const ids = await db.manyOrNone<{ table: string; index: string }>(`
    select tablename as table, indexname as index from pg_indexes
     where tablename in ('svc_events', 'svc_changes') and indexdef like '%(id)' order by 1`);
  expect(ids).toEqual([{ table: 'svc_changes', index: 'svc_changes_change' }, { table: 'svc_events', index: 'svc_events_event' }]);
}

describe('the conversion of a database of the old layout', () => {
  let database: TestDatabase;
  let db: Db;
  let root: string;

  beforeAll(async () => {
    database = await createTestDatabase('svc_t_layout');
    db = openDb(database.url, 4);
    root = mkdtempSync(join(tmpdir(), 'svc-layout-'));
  });
  afterAll(async () => {
    await db?.$pool.end();
    await database?.drop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('fills the global scope\'s NULL tenants with \'\', keeps every row and leaves the keys of layout 3', { timeout: 120_000 }, async () => {
    // The migrations up to before the conversion, each capability's in a folder of its own.
    const sets: MigrationSet[] = CONVERTED.map(({ scope, capability, file }) => {
      const dir = join(root, capability);
      cpSync(runtimeMigrations(capability), dir, { recursive: true });
      rmSync(join(dir, file));
      return { scope, dir };
    });
    for (const { capability, file } of CONVERTED) expect(readdirSync(join(root, capability))).not.toContain(file);
    await migrate(db, sets);

    // Old-style rows: half of each table in the global scope (NULL), more rows than one backfill batch.
    await db.none(`
      insert into svc_events (id, stream_type, stream_id, version, event_type, data, tenant_id)
        select 'ev' || lpad(g::text, 6, '0'), 'Company', 'c' || (g / 3), g % 3 + 1, 'Updated', '{}',
               case when (g / 3) % 2 = 0 then null else 't1' end from generate_series(1, 3000) g;
      insert into svc_changes (id, stream_type, stream_id, event_type, tenant_id)
        select 'ch' || lpad(g::text, 6, '0'), 'Company', 'c' || g, 'Updated', case when g % 2 = 0 then null else 't1' end
          from generate_series(1, 700) g;
      -- (audit 0005, applied with the others, left the ids to the writer: these take small ones, as an identity gave)
      insert into svc_audit (id, tenant_id, actor_kind, action, outcome)
        select g, case when g % 2 = 0 then null else 't1' end, 'system', 'record.update', 'success' from generate_series(1, 2500) g;
      insert into svc_media (id, tenant_id, owner_kind, owner_id, filename, content_type, size, sha256, status)
        select 'm' || lpad(g::text, 6, '0'), case when g % 2 = 0 then null else 't1' end, 'user', 'u', 'f.bin',
               'application/octet-stream', 3, md5(g::text), 'committed' from generate_series(1, 1500) g;
      -- The same content in the global scope and in t1: two blobs, before and after.
      insert into svc_media_blobs (tenant_id, sha256, size, storage_key, refcount)
        select t, md5(g::text), 3, 'blobs/' || coalesce(t, '_global') || '/' || g, 1
          from generate_series(1, 1200) g, (values (null), ('t1')) v(t);`);
    const census = () => Promise.all(DISTRIBUTED.map((table) => db.one<{ all: number; global: number; t1: number }>(`
      select count(*)::int as all, count(*) filter (where coalesce(tenant_id, '') = '')::int as global,
             count(*) filter (where tenant_id = 't1')::int as t1 from ${table}`)));
    const before = await census();
    expect(before.map((c) => c.global)).toEqual([1500, 350, 1250, 750, 1200]);
    const auditIds = (await db.manyOrNone<{ id: string }>('select id::text as id from svc_audit order by id')).map((r) => r.id);

    for (const { capability, file } of CONVERTED) cpSync(join(runtimeMigrations(capability), file), join(root, capability, file));
    const applied = await migrate(db, sets, { settings: { batchRows: 1000, batchPauseMs: 0 } });
    expect(applied).toEqual(CONVERTED.map(({ scope, file }) => `${scope}/${file}`));

    expect(await census()).toEqual(before);
    for (const table of DISTRIBUTED) {
      expect((await db.one<{ n: number }>(`select count(*)::int as n from ${table} where tenant_id is null`)).n, table).toBe(0);
    }
    // The audit keyset is kept: same ids, same order.
    expect((await db.manyOrNone<{ id: string }>('select id::text as id from svc_audit order by id')).map((r) => r.id)).toEqual(auditIds);
    // The backfills ran in batches, each recorded.
    const backfills = await db.manyOrNone<{ name: string; step: number; rows_done: string }>(`
      select name, step, rows_done from svc_migration_steps where kind = 'backfill' and state = 'done' order by scope, name, step`);
    expect(backfills.map((b) => Number(b.rows_done))).toEqual([1250, 1500, 350, 750, 1200]);
    await expectLayout3(db);
    // The old keys are gone: no unique (id), no (coalesce(tenant_id, ''), sha256), no second (tenant_id, id) on the audit log.
    const names = (await db.manyOrNone<{ name: string }>(`select indexname as name from pg_indexes where tablename = any($1)`, [DISTRIBUTED]))
      .map((r) => r.name);
    for (const gone of ['svc_events_id_key', 'svc_changes_id_key', 'svc_audit_tenant_id', 'svc_media_blobs_content', 'svc_media_blobs_sha256']) {
      expect(names).not.toContain(gone);
    }
    // The new keys hold: an event's version and a blob's content are unique per tenant.
    await expect(db.none(`insert into svc_events (id, stream_type, stream_id, version, event_type, tenant_id)
      values ('dup', 'Company', 'c1', 1, 'Updated', '')`)).resolves.toBeNull();
    await expect(db.none(`insert into svc_events (id, stream_type, stream_id, version, event_type, tenant_id)
      values ('dup2', 'Company', 'c1', 1, 'Updated', '')`)).rejects.toMatchObject({ code: '23505', constraint: 'svc_events_stream_version' });
    await expect(db.none(`insert into svc_media_blobs (tenant_id, sha256, size, storage_key) values ('', md5('1'), 3, 'x')`))
      .rejects.toMatchObject({ code: '23505' });
    await expect(db.none(`insert into svc_audit (tenant_id, actor_kind, action, outcome) values (null, 'system', 'x', 'success')`))
      .rejects.toMatchObject({ code: '23502' });
  });
});

describe('the global scope over HTTP and GraphQL', () => {
  let service: TestService;
  let global: Gql;
  let tenant: Gql;
  const sockets: Client[] = [];
  const headers = async (tenantId: string | null, role: 'Manager' | 'Admin' = 'Manager') =>
    ({ authorization: `Bearer ${await service.token({ role, tenantId, userId: `layout-${role}-${tenantId ?? 'global'}` })}` });
  const get = async (path: string, tenantId: string | null) => {
    const response = await fetch(`${service.url}${path}`, { headers: await headers(tenantId) });
    return { status: response.status, body: await response.json() as any };
  };

  beforeAll(async () => {
    service = await startRecordsService({ env: { SVC_MEDIA_DIR: mkdtempSync(join(tmpdir(), 'svc-layout-media-')) } });
    global = await clientFor(service, { role: 'Manager', tenantId: null, userId: 'layout-Manager-global' });
    tenant = await clientFor(service, { role: 'Manager', tenantId: 't1', userId: 'layout-Manager-t1' });
  });
  afterAll(async () => {
    for (const socket of sockets) await socket.dispose();
    await service?.close();
  });

  it('a service\'s database has the tables of layout 3', async () => {
    await expectLayout3(service.ctx.db);
  });

  it('stores a global record, its event and audit entry with \'\' and answers tenantId null; a tenant sees none of it', async () => {
    // A subscriber of the global scope, live before the write.
    const token = await service.token({ role: 'Manager', tenantId: null, userId: 'layout-subscriber' });
    const socket = createClient({ url: `${service.url.replace('http', 'ws')}/graphql/ws`, webSocketImpl: WebSocket, connectionParams: { token }, retryAttempts: 0 });
    sockets.push(socket);
    const before = service.ctx.services.feed.stats().subscribers;
    const changes: any[] = [];
    const delivered = new Promise<void>((done) => {
      socket.subscribe({ query: 'subscription { modelChanges(model: "Company") { recordId tenantId } }' }, {
        next: (message) => { changes.push(message.data?.modelChanges); done(); }, error: () => undefined, complete: () => undefined,
      });
    });
    while (service.ctx.services.feed.stats().subscribers <= before) await new Promise((done) => setTimeout(done, 10));

    const company = await create(global, 'Company', { name: 'Global Co' });
    expect(company.tenantId).toBeNull();
    const db = service.ctx.db;
    expect(await db.one('select tenant_id from company where id = $1', [company.id])).toEqual({ tenant_id: '' });
    expect(await db.manyOrNone('select tenant_id from svc_events where stream_id = $1', [company.id])).toEqual([{ tenant_id: '' }]);
    expect(await db.manyOrNone('select tenant_id from svc_audit where entity_id = $1', [company.id])).toEqual([{ tenant_id: '' }]);

    expect((await global(RECORD, { model: 'Company', id: company.id })).data.record).toMatchObject({ id: company.id, tenantId: null });
    const listed = (await global(RECORDS, { model: 'Company', where: { tenantId: { isNull: true } } })).data.records;
    expect(listed.map((r: any) => [r.id, r.tenantId])).toEqual([[company.id, null]]);
    const history = await global('query($id: ID!) { recordHistory(model: "Company", id: $id) { eventType data } }', { id: company.id });
    expect(history.data.recordHistory).toMatchObject([{ eventType: 'Created', data: { id: company.id, tenantId: null } }]);
    await delivered;
    expect(changes[0]).toEqual({ recordId: company.id, tenantId: null });

    const audit = await get(`/audit/logs?entityId=${company.id}`, null);
    expect(audit.status).toBe(200);
    expect(audit.body.items.map((e: any) => [e.action, e.tenantId])).toEqual([['record.create', null]]);

    // The tenant sees none of it: not the record, not its history, not its audit entry.
    expect((await tenant(RECORD, { model: 'Company', id: company.id })).data?.record ?? null).toBeNull();
    expect((await tenant(RECORDS, { model: 'Company' })).data.records.map((r: any) => r.id)).not.toContain(company.id);
    expect((await get(`/audit/logs?entityId=${company.id}`, 't1')).body.items).toEqual([]);
  });

  it('keeps a tenant\'s rows out of the global scope', async () => {
    const company = await create(tenant, 'Company', { name: 'Tenant Co' });
    expect(company.tenantId).toBe('t1');
    expect(await service.ctx.db.one('select tenant_id from company where id = $1', [company.id])).toEqual({ tenant_id: 't1' });
    expect((await global(RECORD, { model: 'Company', id: company.id })).data?.record ?? null).toBeNull();
    expect((await global(RECORDS, { model: 'Company' })).data.records.map((r: any) => r.id)).not.toContain(company.id);
    expect((await get(`/audit/logs?entityId=${company.id}`, null)).body.items).toEqual([]);
    expect((await get(`/audit/logs?entityId=${company.id}`, 't1')).body.items.map((e: any) => e.tenantId)).toEqual(['t1']);
  });

  it('stores a global upload and its blob with \'\'; the same bytes in a tenant are another blob it alone can read', async () => {
    const upload = async (tenantId: string | null) => {
      const form = new FormData();
      form.append('file', new Blob(['layout bytes'], { type: 'text/plain' }), 'layout.txt');
      const response = await fetch(`${service.url}/media`, { method: 'POST', headers: await headers(tenantId), body: form });
      expect(response.status).toBe(201);
      return (await response.json() as any).id as string;
    };
    const mine = await upload(null);
    const theirs = await upload('t1');
    const db = service.ctx.db;
    expect(await db.one('select tenant_id, status from svc_media where id = $1', [mine])).toEqual({ tenant_id: '', status: 'committed' });
    const blobs = await db.manyOrNone<{ tenant_id: string }>(`
      select b.tenant_id from svc_media_blobs b join svc_media m on m.tenant_id = b.tenant_id and m.sha256 = b.sha256
       where m.id = any($1) order by 1`, [[mine, theirs]]);
    expect(blobs).toEqual([{ tenant_id: '' }, { tenant_id: 't1' }]);
    expect((await get(`/media/${mine}/metadata`, null)).status).toBe(200);
    expect((await get(`/media/${mine}/metadata`, 't1')).status).toBe(404);
    expect((await get(`/media/${theirs}/metadata`, null)).status).toBe(404);
    const entries = await get(`/audit/logs?entityId=${mine}`, null);
    expect(entries.body.items.map((e: any) => [e.action, e.tenantId])).toEqual([['media.upload', null]]);
  });
});
