/** Admin bootstrap (specification, Authentication item 9), with one and with two instances. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { post, ownDatabase } from './helpers.ts';

let database: TestDatabase;

beforeAll(async () => {
  database = await ownDatabase();
});
afterAll(async () => {
  await database?.drop();
});

/** Starts an instance on the shared database, runs `work`, stops it; returns the log lines. */
async function boot(env: Record<string, string>, work: (svc: TestService) => Promise<void> = async () => {}) {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const svc = await startTestService({ database, env, log });
  try {
    await work(svc);
  } finally {
    await svc.close();
  }
  return lines.join('');
}

const admins = async (svc: TestService) =>
  svc.ctx.db.manyOrNone<{ id: string; email: string; role: string }>(`select id, email, role from svc_users where role = 'Admin' order by email`);
const login = (svc: TestService, email: string, password: string) => post(svc.url, '/auth/login', { email, password });

describe('admin bootstrap', () => {
  it('creates an Admin with a ULID id once; a restart neither duplicates it nor changes its password', async () => {
    await boot({ ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'first-pass1' }, async (svc) => {
      const rows = await admins(svc);
      expect(rows).toEqual([{ id: expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/), email: 'root@example.com', role: 'Admin' }]);
      const reply = await login(svc, 'root@example.com', 'first-pass1');
      expect(reply.status).toBe(200);
      expect(reply.body.user.role).toBe('admin');
    });
    const logged = await boot({ ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'second-pass2' }, async (svc) => {
      expect(await admins(svc)).toHaveLength(1);
      expect((await login(svc, 'root@example.com', 'first-pass1')).status).toBe(200);
      expect((await login(svc, 'root@example.com', 'second-pass2')).status).toBe(401);
    });
    expect(logged).toMatch(/ADMIN_PASSWORD differs/);
    expect(logged).not.toContain('second-pass2');
    expect(logged).not.toContain('first-pass1');
  });

  it('logs no warning when the env password matches', async () => {
    const logged = await boot({ ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'first-pass1' });
    expect(logged).not.toMatch(/differs/);
  });

  it('ADMIN_RESET_PASSWORD=true updates the hash on that boot, and revokes the old sessions', async () => {
    let oldToken = '';
    await boot({ ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'first-pass1' }, async (svc) => {
      oldToken = (await login(svc, 'root@example.com', 'first-pass1')).body.token;
    });
    const logged = await boot({ ADMIN_EMAIL: 'root@example.com', ADMIN_PASSWORD: 'reset-pass3', ADMIN_RESET_PASSWORD: 'true' }, async (svc) => {
      expect((await login(svc, 'root@example.com', 'reset-pass3')).status).toBe(200);
      expect((await login(svc, 'root@example.com', 'first-pass1')).status).toBe(401);
      const me = await fetch(`${svc.url}/auth/me`, { headers: { authorization: `Bearer ${oldToken}` } });
      expect(me.status).toBe(401);
      expect(await admins(svc)).toHaveLength(1);
    });
    expect(logged).not.toContain('reset-pass3');
  });

  it('a changed ADMIN_EMAIL seeds an additional admin', async () => {
    await boot({ ADMIN_EMAIL: 'second@example.com', ADMIN_PASSWORD: 'other-pass4' }, async (svc) => {
      expect((await admins(svc)).map((a) => a.email)).toEqual(['root@example.com', 'second@example.com']);
    });
  });

  it('two instances booting together create one admin', async () => {
    const env = { ADMIN_EMAIL: 'twin@example.com', ADMIN_PASSWORD: 'twin-pass5' };
    const quiet = pino({ level: 'silent' });
    const [a, b] = await Promise.all([
      startTestService({ database, env, log: quiet }), startTestService({ database, env, log: quiet }),
    ]);
    try {
      const rows = await a.ctx.db.manyOrNone(`select id from svc_users where email = 'twin@example.com'`);
      expect(rows).toHaveLength(1);
      expect((await login(b, 'twin@example.com', 'twin-pass5')).status).toBe(200);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
