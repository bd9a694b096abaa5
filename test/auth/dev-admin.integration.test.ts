/**
 * `svc-gen dev`'s development admin: created only on a database with no user
 * and no ADMIN_*, kept in a 0600 file and handed back while it still works.
 */
import { mkdtempSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { loadConfig } from '../../runtime/config/index.ts';
import { ensureDevAdmin, DEV_ADMIN_EMAIL } from '../../runtime/auth/index.ts';
import type { TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { post, ownDatabase } from './helpers.ts';

let database: TestDatabase;
let svc: TestService;

beforeAll(async () => {
  database = await ownDatabase();
  svc = await startTestService({ database });
});
afterAll(async () => {
  await svc?.close();
  await database?.drop();
});

const quiet = pino({ level: 'silent' });
const ensure = (stateFile: string, env: Record<string, string> = {}) =>
  ensureDevAdmin({ db: svc.ctx.db, config: loadConfig(env), log: quiet, audit: svc.ctx.services.audit, stateFile });

describe('development admin', () => {
  it('is not created when ADMIN_EMAIL and ADMIN_PASSWORD are set, nor in production', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-devadmin-')), 'dev-admin.json');
    expect(await ensure(file, { ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'pass-word1' })).toBeNull();
    expect(await ensure(file, { SVC_ENV: 'production', JWT_SECRET: 'x'.repeat(32), DATABASE_URL: 'postgres://x@127.0.0.1/x' })).toBeNull();
    expect(existsSync(file)).toBe(false);
  });

  it('is created on a database without users, can log in, and is handed back on the next start', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-devadmin-')), 'dev-admin.json');
    const first = await ensure(file);
    expect(first).toMatchObject({ email: DEV_ADMIN_EMAIL, created: true });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const reply = await post(svc.url, '/auth/login', { email: first!.email, password: first!.password });
    expect(reply.status).toBe(200);
    expect(reply.body.user.role).toBe('admin');
    const audit = await svc.ctx.db.one<{ n: number }>(`select count(*)::int as n from svc_audit where action = 'user.create' and entity_id = $1`, [reply.body.user.id]);
    expect(audit.n).toBe(1);

    expect(await ensure(file)).toEqual({ email: first!.email, password: first!.password, created: false });
    // Another folder (no saved credentials) on a database that has users: nothing is created.
    expect(await ensure(join(mkdtempSync(join(tmpdir(), 'svc-devadmin-')), 'dev-admin.json'))).toBeNull();
    expect((await svc.ctx.db.one<{ n: number }>('select count(*)::int as n from svc_users')).n).toBe(1);
  });
});
