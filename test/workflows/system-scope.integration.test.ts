/**
 * The explicit system scope (runtime/tenancy, SystemScope.ALL): the engine
 * reads a run of any tenant because it says so; a reader given a tenant's
 * scope sees only that tenant's runs; and leaving the scope out of readRun
 * is a type error, no longer a silent "every tenant".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../runtime/db/index.ts';
import type { WorkflowDef } from '../../runtime/ir/types.ts';
import { SystemScope, TenantScope } from '../../runtime/tenancy/index.ts';
import { insertRun, readRun } from '../../runtime/workflows/store.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

const FIXTURE = `${import.meta.dirname}/fixtures/depth/schema.ts`;

let database: TestDatabase;
let db: Database;

beforeAll(async () => {
  database = await createTestDatabase('svc_t', { fixture: FIXTURE });
  db = await openDatabase({ url: database.url, poolSize: 2 });
  for (const [id, tenantId] of [['run-acme', 'acme'], ['run-global', null]] as const) {
    await db.db.tx((t) => insertRun(t, {
      id, definition: { name: 'chain' } as WorkflowDef, tenantId, trigger: { kind: 'manual', input: {} }, actor: null, depth: 0, eventId: null, scheduledFor: null,
    }));
  }
});
afterAll(async () => {
  await db?.close();
  await database?.drop();
});

describe('the system scope', () => {
  it('reads a run of any scope; a tenant scope reads only its own', async () => {
    expect((await readRun(db.db, 'run-acme', { scope: SystemScope.ALL }))?.tenantId).toBe('acme');
    expect((await readRun(db.db, 'run-global', { scope: SystemScope.ALL }))?.tenantId).toBeNull();
    expect((await readRun(db.db, 'run-acme', { scope: TenantScope.of('acme') }))?.id).toBe('run-acme');
    expect(await readRun(db.db, 'run-acme', { scope: TenantScope.of('other') })).toBeNull();
    expect(await readRun(db.db, 'run-acme', { scope: TenantScope.GLOBAL })).toBeNull();
    expect((await readRun(db.db, 'run-global', { scope: TenantScope.GLOBAL }))?.id).toBe('run-global');
  });

  it('is the only way to say "every tenant": no scope is a type error', async () => {
    // @ts-expect-error the scope is required
    await expect(readRun(db.db, 'run-acme', {})).rejects.toThrow();
    // @ts-expect-error undefined is not a scope
    await expect(readRun(db.db, 'run-acme', { scope: undefined })).rejects.toThrow();
    expect(SystemScope.ALL.contains('acme') && SystemScope.ALL.contains(null)).toBe(true);
  });
});
