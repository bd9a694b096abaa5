/** Self-registration (specification, Authentication item 10) and the password rules. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { get, post, ownDatabase } from './helpers.ts';

let database: TestDatabase;
let perUser: TestService;
let fixed: TestService;

beforeAll(async () => {
  // Two configurations over one database: the unique constraint is shared.
  database = await ownDatabase();
  perUser = await startTestService({ database, env: {
    SVC_ENABLE_SELF_REGISTRATION: 'true', SVC_SELF_REGISTRATION_ROLE: 'sales', SVC_SELF_REGISTRATION_TENANT: 'per-user',
    PASSWORD_MIN_LENGTH: '10',
  } });
  fixed = await startTestService({ database, env: {
    SVC_ENABLE_SELF_REGISTRATION: 'true', SVC_SELF_REGISTRATION_TENANT: 'acme', PASSWORD_REQUIRE_COMPLEXITY: 'false',
  } });
});
afterAll(async () => {
  await perUser?.close();
  await fixed?.close();
  await database?.drop();
});

const signUp = (svc: TestService, email: string, password = 'longsecret123') =>
  post(svc.url, '/auth/register', { email, password, firstName: 'Ada', lastName: 'Lovelace' });

describe('POST /auth/register', () => {
  it('answers the login shape with user.tenant_id; per-user tenant is the user id; role from the env', async () => {
    const reply = await signUp(perUser, ' New.User@Example.com ');
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.body).sort()).toEqual(['refresh_token', 'token', 'user']);
    const { user } = reply.body;
    expect(user).toEqual({ id: expect.any(String), email: 'new.user@example.com', role: 'sales', tenant_id: user.id });
    const me = await get(perUser.url, '/auth/me', reply.body.token);
    expect(me.body).toMatchObject({ id: user.id, role: 'sales', tenant_id: user.id, firstName: 'Ada' });
    const login = await post(perUser.url, '/auth/login', { email: 'new.user@example.com', password: 'longsecret123' });
    expect(login.status).toBe(200);
  });

  it('uses a fixed tenant and the default viewer role', async () => {
    const reply = await signUp(fixed, 'fixed@example.com', 'onlyletters');
    expect(reply.status).toBe(200);
    expect(reply.body.user).toMatchObject({ role: 'viewer', tenant_id: 'acme' });
  });

  it('answers 409 on a duplicate email, also when it differs only in case', async () => {
    expect((await signUp(perUser, 'dup@example.com')).status).toBe(200);
    const again = await signUp(fixed, 'DUP@example.com');
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: expect.any(String), code: expect.any(String) });
  });

  it('creates exactly one user under concurrent registrations of one email', async () => {
    const replies = await Promise.all([perUser, fixed, perUser, fixed].map((svc) => signUp(svc, 'race@example.com')));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    const rows = await perUser.ctx.db.one('select count(*) as n from svc_users where email = $1', ['race@example.com']);
    expect(rows.n).toBe(1);
  });

  it('enforces PASSWORD_MIN_LENGTH and complexity with a 400 naming the rule', async () => {
    const short = await signUp(perUser, 'short@example.com', 'abc12');
    expect(short.status).toBe(400);
    expect(short.body).toMatchObject({ error: 'password must be at least 10 characters', rule: 'min_length' });
    const simple = await signUp(perUser, 'simple@example.com', 'onlyletterslong');
    expect(simple.status).toBe(400);
    expect(simple.body).toMatchObject({ rule: 'complexity' });
    expect(simple.body.error).toMatch(/letters and numbers/);
    expect((await signUp(perUser, 'digits@example.com', '12345678901')).status).toBe(400);
  });

  it('answers 400 for an invalid or missing email', async () => {
    for (const email of ['no-at-sign', 'a@b', '', 42]) {
      const reply = await post(perUser.url, '/auth/register', { email, password: 'longsecret123' });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatch(/email/);
    }
  });
});
