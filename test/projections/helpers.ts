/**
 * Shared by the projections, public read and diagnostics tests: the catalog
 * fixture, a server with custom projections, and a record writer that does
 * what the records layer does (row + event in one transaction) with plain SQL,
 * so these tests do not depend on the GraphQL layer.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { ulid } from 'ulid';
import { buildFixture, loadDefinition, startTestService, TEST_JWT_SECRET, type TestService } from '../helpers/service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { startService } from '../../runtime/service/index.ts';
import { TokenSigner, type Principal } from '../../runtime/auth/index.ts';
import type { Role } from '../../runtime/ir/types.ts';
import type { ProjectionDefinition } from '../../runtime/projections/index.ts';
import type { ServiceContext } from '../../runtime/service/index.ts';
import { tenantKey } from '../../runtime/tenancy/index.ts';

export const CATALOG = join(import.meta.dirname, 'fixtures', 'catalog', 'schema.ts');

export interface CatalogOptions {
  readonly env?: Record<string, string>;
  readonly database?: TestDatabase;
  readonly projections?: readonly ProjectionDefinition[];
}

/** startTestService on the catalog fixture; with custom projections added to the definition. */
export async function startCatalog(options: CatalogOptions = {}): Promise<TestService> {
  const database = options.database ?? (await testDatabase());
  const owned = !options.database;
  if (!options.projections) {
    const svc = await startTestService({ fixture: CATALOG, env: options.env, database }).catch(async (error) => {
      if (owned) await database.drop();
      throw error;
    });
    return { ...svc, close: async () => { await svc.close(); if (owned) await database.drop(); } };
  }
  const dir = await buildFixture(CATALOG);
  const env = { DATABASE_URL: database.url, JWT_SECRET: TEST_JWT_SECRET, SVC_LOG_LEVEL: 'warn', SVC_DB_POOL_SIZE: '10', ...options.env };
  const definition = { ...(await loadDefinition(dir)), projections: options.projections };
  const running = await startService(definition, { env, port: 0, host: '127.0.0.1', log: pino({ level: 'silent' }) })
    .catch(async (error) => {
      if (owned) await database.drop();
      throw error;
    });
  const signer = new TokenSigner(TEST_JWT_SECRET, 3600);
  return {
    ...running, database, dir,
    token: (p) => mintToken(running.ctx, signer, p),
    async close() {
      await running.stop();
      if (owned) await database.drop();
    },
  };
}

/** As test/helpers/service.ts does (not exported there): a user and a live session, so auth accepts the token. */
async function mintToken(ctx: ServiceContext, signer: TokenSigner, p: Partial<Principal> & { role: Role }): Promise<string> {
  const userId = p.userId ?? `user-${p.role}`;
  const tenantId = p.tenantId ?? null;
  await ctx.db.none(
    `insert into svc_users (id, email, role, tenant_id) values ($1, $2, $3, $4) on conflict do nothing`,
    [userId, `${userId}.${ulid()}@test.invalid`.toLowerCase(), p.role, tenantId],
  );
  const sessionId = ulid();
  await ctx.db.none(
    `insert into svc_sessions (id, user_id, role, tenant_id, expires_at) values ($1, $2, $3, $4, now() + interval '1 day')`,
    [sessionId, userId, p.role, tenantId],
  );
  return signer.sign({ userId, role: p.role, tenantId, sessionId, email: null });
}

/**
 * A database of our own, migrated for the fixture (a clone of its template). The prefix is not `svc_t_`: the global setup of any
 * vitest run drops every `svc_t_*` database, including those of runs in progress.
 */
export function testDatabase(fixture = CATALOG): Promise<TestDatabase> {
  return createTestDatabase('svc_tp', { fixture });
}

type Row = Record<string, unknown>;

const quote = (name: string) => `"${name}"`;

/** Writes rows and their events like the records layer: one transaction each, events with camelCase data, the feed woken after the commit. */
export function writer(ctx: ServiceContext) {
  const model = (name: string) => ctx.ir.models.find((m) => m.name === name)!;
  const columnOf = (modelName: string, key: string) => {
    const field = model(modelName).fields.find((f) => f.name === key || f.inputName === key);
    if (!field?.column) throw new Error(`no column for ${modelName}.${key}`);
    return field.column;
  };
  const event = (modelName: string, id: string, eventType: string, data: unknown, tenantId: string | null) =>
    ({ streamType: modelName, streamId: id, eventType, data, actorId: 'test', tenantId });
  return {
    async create(modelName: string, data: Row, tenantId: string | null = null): Promise<string> {
      const id = ulid();
      const keys = Object.keys(data);
      const columns = ['id', 'tenant_id', ...keys.map((k) => columnOf(modelName, k))].map(quote).join(', ');
      const params = [id, tenantKey(tenantId), ...keys.map((k) => jsonish(data[k]))];
      await ctx.db.tx(async (t) => {
        await t.none(`insert into ${quote(model(modelName).table)} (${columns}) values (${params.map((_, i) => `$${i + 1}`).join(', ')})`, params);
        await ctx.services.events.append(t, event(modelName, id, 'Created', { id, ...data }, tenantId));
      });
      ctx.services.events.committed();
      return id;
    },
    async update(modelName: string, id: string, data: Row): Promise<void> {
      const keys = Object.keys(data);
      const set = keys.map((k, i) => `${quote(columnOf(modelName, k))} = $${i + 2}`).join(', ');
      await ctx.db.tx(async (t) => {
        await t.none(`update ${quote(model(modelName).table)} set ${set}, updated_at = now() where id = $1`, [id, ...keys.map((k) => jsonish(data[k]))]);
        await ctx.services.events.append(t, event(modelName, id, 'Updated', data, null));
      });
      ctx.services.events.committed();
    },
    async lifecycle(modelName: string, id: string, eventType: 'Deleted' | 'Restored' | 'HardDeleted'): Promise<void> {
      const table = quote(model(modelName).table);
      const sql = eventType === 'Deleted' ? `update ${table} set deleted_at = now(), updated_at = now() where id = $1`
        : eventType === 'Restored' ? `update ${table} set deleted_at = null, updated_at = now() where id = $1`
        : `delete from ${table} where id = $1`;
      await ctx.db.tx(async (t) => {
        await t.none(sql, [id]);
        await ctx.services.events.append(t, event(modelName, id, eventType, { id }, null));
      });
      ctx.services.events.committed();
    },
  };
}

function jsonish(value: unknown): unknown {
  return value !== null && typeof value === 'object' && !(value instanceof Date) ? JSON.stringify(value) : value;
}

export async function until<T>(probe: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function adminFetch(svc: TestService, path: string, init: RequestInit = {}): Promise<Response> {
  const token = await svc.token({ role: 'Admin' });
  return fetch(`${svc.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });
}
