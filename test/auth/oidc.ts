/**
 * A real OpenID provider (npm oidc-provider) on loopback, and a browser-like
 * client with a cookie jar (per host name, as browsers do: not per port).
 */
import { createServer, type Server } from 'node:http';
import Provider from 'oidc-provider';

export interface TestProvider {
  readonly issuer: string;
  /** What the next login interaction answers: an account id, or an OAuth error. */
  next: { accountId: string } | { error: string };
  /** Claims an account reports instead of the defaults (`<id>@IdP.example.com`, verified). */
  readonly claims: Map<string, { email?: string; email_verified?: boolean }>;
  configure(redirectUris: string[]): void;
  close(): Promise<void>;
}

export const CLIENT_ID = 'svc-gen-test';
export const CLIENT_SECRET = 'svc-gen-test-secret-0123456789';

export async function startProvider(): Promise<TestProvider> {
  let provider: any = null;
  const server: Server = createServer((req, res) => {
    if (req.url?.startsWith('/interaction/')) return void interact(req, res);
    provider.callback()(req, res);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const handle: TestProvider = {
    issuer,
    next: { accountId: 'alice' },
    claims: new Map(),
    configure(redirectUris) {
      provider = new Provider(issuer, providerConfig(redirectUris, handle.claims));
    },
    close: () => new Promise((done) => server.close(() => done())),
  };
  // Stands in for the provider's login page: the "user" logs in (or refuses) at once.
  async function interact(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) {
    const result = 'error' in handle.next
      ? { error: handle.next.error, error_description: 'the user refused' }
      : { login: { accountId: handle.next.accountId } };
    await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
  }
  return handle;
}

function providerConfig(redirectUris: string[], overrides: TestProvider['claims']) {
  return {
    clients: [{
      client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: redirectUris,
      token_endpoint_auth_method: 'client_secret_post', grant_types: ['authorization_code'], response_types: ['code'],
    }],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => true },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, email: `${id}@IdP.example.com`, email_verified: true, name: id, ...overrides.get(id) }),
    }),
    // Consent is implied: grant whatever the client asked for.
    loadExistingGrant: async (ctx: any) => {
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
      grant.addOIDCScope(ctx.oidc.params.scope);
      await grant.save();
      return grant;
    },
  };
}

/** A browser: follows redirects by hand, keeps cookies per host name. */
export class Browser {
  private readonly jar = new Map<string, Map<string, string>>();

  async get(url: string): Promise<Response> {
    const host = new URL(url).hostname;
    const cookies = [...(this.jar.get(host) ?? new Map())].map(([k, v]) => `${k}=${v}`).join('; ');
    const response = await fetch(url, { redirect: 'manual', headers: cookies ? { cookie: cookies } : {} });
    for (const line of response.headers.getSetCookie()) this.store(host, line);
    return response;
  }

  /** Follows redirects until one leads to `stopAt` (not fetched); returns that URL. */
  async followUntil(url: string, stopAt: string): Promise<string> {
    let next = url;
    for (let hop = 0; hop < 10; hop++) {
      if (next.startsWith(stopAt)) return next;
      const response = await this.get(next);
      const location = response.headers.get('location');
      if (!location) throw new Error(`no redirect from ${next}: ${response.status} ${await response.text()}`);
      next = new URL(location, next).toString();
    }
    throw new Error('too many redirects');
  }

  cookie(host: string, name: string): string | undefined {
    return this.jar.get(host)?.get(name);
  }

  private store(host: string, line: string): void {
    const [pair] = line.split(';');
    const at = pair.indexOf('=');
    const jar = this.jar.get(host) ?? new Map<string, string>();
    const value = pair.slice(at + 1);
    if (value === '' || /max-age=0/i.test(line)) jar.delete(pair.slice(0, at));
    else jar.set(pair.slice(0, at), value);
    this.jar.set(host, jar);
  }
}
