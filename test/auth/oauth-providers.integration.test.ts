/**
 * Which emails count as verified, per provider (issue 10, point 2): GitHub says
 * so in /user/emails, Microsoft's `email` claim never does. A small stand-in
 * for each provider's HTTP endpoints (authorize, token, userinfo) on loopback.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from '../helpers/db.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { ownDatabase, post } from './helpers.ts';
import { Browser } from './oidc.ts';

interface Account {
  readonly id: string;
  /** What GET /user (GitHub) or the userinfo endpoint (Microsoft) says. */
  readonly email: string;
  /** GitHub's /user/emails. */
  readonly emails?: Array<{ email: string; primary: boolean; verified: boolean }>;
}

let database: TestDatabase;
let server: Server;
let base: string;
let service: TestService;
let current: Account;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname.endsWith('/authorize')) {
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', `code-${current.id}`);
      back.searchParams.set('state', url.searchParams.get('state')!);
      return void res.writeHead(302, { location: back.toString() }).end();
    }
    if (url.pathname.endsWith('/token')) return json({ access_token: `at-${current.id}`, token_type: 'bearer' });
    if (url.pathname === '/github/user') return json({ id: Number(current.id.replace(/\D/g, '')) || 7, login: current.id, email: current.email });
    if (url.pathname === '/github/user/emails') return json(current.emails ?? []);
    if (url.pathname === '/microsoft/userinfo') return json({ sub: current.id, email: current.email, email_verified: true });
    res.writeHead(404).end();
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  database = await ownDatabase();
  service = await startTestService({
    database,
    env: {
      OAUTH_GITHUB_CLIENT_ID: 'gh', OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret',
      OAUTH_GITHUB_AUTH_URL: `${base}/github/authorize`, OAUTH_GITHUB_TOKEN_URL: `${base}/github/token`,
      OAUTH_GITHUB_USERINFO_URL: `${base}/github/user`,
      OAUTH_MICROSOFT_CLIENT_ID: 'ms', OAUTH_MICROSOFT_CLIENT_SECRET: 'ms-secret',
      OAUTH_MICROSOFT_AUTH_URL: `${base}/microsoft/authorize`, OAUTH_MICROSOFT_TOKEN_URL: `${base}/microsoft/token`,
      OAUTH_MICROSOFT_USERINFO_URL: `${base}/microsoft/userinfo`,
    },
  });
  const admin = await service.token({ role: 'Admin', userId: 'providers-admin' });
  expect((await post(service.url, '/auth/users', { email: 'ceo@corp.example.com', password: 'secret123', role: 'Admin' }, admin)).status).toBe(201);
});
afterAll(async () => {
  await service?.close();
  await database?.drop();
  server?.closeAllConnections();
  await new Promise<void>((done) => server?.close(() => done()));
});

async function signIn(provider: 'github' | 'microsoft', account: Account) {
  current = account;
  const browser = new Browser();
  const callback = `${service.url}/auth/oauth/callback/${provider}`;
  const url = await browser.followUntil(`${service.url}/auth/oauth/authorize?provider=${provider}`, callback);
  const response = await browser.get(url);
  return { status: response.status, body: (await response.json()) as any };
}

describe('OAuth email verification per provider', () => {
  it('GitHub: an unverified primary email matching an existing admin is refused; a verified one links', async () => {
    const refused = await signIn('github', {
      id: 'gh101', email: 'ceo@corp.example.com', emails: [{ email: 'ceo@corp.example.com', primary: true, verified: false }],
    });
    expect(refused.status).toBe(403);
    expect(refused.body.access_token).toBeUndefined();
    const linked = await signIn('github', {
      id: 'gh102', email: 'ceo@corp.example.com', emails: [{ email: 'ceo@corp.example.com', primary: true, verified: true }],
    });
    expect(linked.status).toBe(200);
    expect(linked.body.user).toMatchObject({ email: 'ceo@corp.example.com', role: 'admin' });
  });

  it('GitHub: the primary address of /user/emails is used, not the profile\'s public email', async () => {
    const reply = await signIn('github', {
      id: 'gh103', email: 'ceo@corp.example.com',
      emails: [{ email: 'ceo@corp.example.com', primary: false, verified: false }, { email: 'dev@home.example.com', primary: true, verified: true }],
    });
    expect(reply.status).toBe(200);
    expect(reply.body.user).toMatchObject({ email: 'dev@home.example.com', role: 'viewer' });
  });

  it('Microsoft: the email claim is never treated as verified, even with email_verified: true', async () => {
    const refused = await signIn('microsoft', { id: 'ms-mallory', email: 'ceo@corp.example.com' });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    const fresh = await signIn('microsoft', { id: 'ms-newcomer', email: 'newcomer@corp.example.com' });
    expect(fresh.status).toBe(200);
    expect(fresh.body.user).toMatchObject({ email: 'newcomer@corp.example.com', role: 'viewer' });
  });
});
