/**
 * The OAuth2 / OIDC client side: the authorization URL, the code exchange
 * (client_secret_post with the PKCE verifier) and the userinfo read.
 *
 * Who the user is comes from the userinfo endpoint only, called with the
 * access token over TLS: an ID token, if the provider sends one, is not read
 * (reading it would need its signature, issuer, audience, expiry and nonce
 * verified against the provider's keys). Whether the email is verified is the
 * provider's word: OIDC `email_verified` (Google, Okta), GitHub's
 * `/user/emails`; Microsoft's `email` claim is never treated as verified.
 */
import type { OAuthProviderConfig } from '../../config/index.ts';
import { HttpError, badRequest } from '../../http/errors.ts';

/** Scopes that yield an email address at each provider. */
const SCOPES: Record<OAuthProviderConfig['name'], string> = {
  google: 'openid email profile',
  microsoft: 'openid email profile',
  okta: 'openid email profile',
  github: 'read:user user:email',
};

const TIMEOUT_MS = 10_000;

export interface AuthorizeParams {
  readonly state: string;
  readonly nonce: string;
  readonly codeChallenge: string;
  readonly redirectUri: string;
}

export function authorizationUrl(provider: OAuthProviderConfig, params: AuthorizeParams): string {
  const url = new URL(provider.authUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', provider.clientId);
  url.searchParams.set('redirect_uri', params.redirectUri);
  url.searchParams.set('scope', SCOPES[provider.name]);
  url.searchParams.set('state', params.state);
  url.searchParams.set('nonce', params.nonce);
  url.searchParams.set('code_challenge', params.codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  return url.toString();
}

export interface ProviderIdentity {
  readonly email: string;
  /** The provider's stable id of the user (`sub`, GitHub's `id`). */
  readonly subject: string;
  /** The provider says the user controls `email`. */
  readonly emailVerified: boolean;
}

const unavailable = () => new HttpError(502, 'oauth provider unavailable');

async function call(url: string, init: RequestInit): Promise<{ status: number; body: Record<string, unknown> }> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    throw unavailable();
  }
  const body = await response.json().catch(() => null);
  if (response.status >= 500 || typeof body !== 'object' || body === null) throw unavailable();
  return { status: response.status, body: body as Record<string, unknown> };
}

/** Exchanges the code (PKCE) for an access token. */
export async function exchangeCode(
  provider: OAuthProviderConfig, code: string, codeVerifier: string, redirectUri: string,
): Promise<string> {
  const form = new URLSearchParams({
    grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: codeVerifier,
    client_id: provider.clientId, client_secret: provider.clientSecret,
  });
  const { status, body } = await call(provider.tokenUrl, {
    method: 'POST', body: form,
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
  });
  if (status !== 200 || typeof body.access_token !== 'string') {
    throw badRequest('oauth code exchange failed', { providerError: typeof body.error === 'string' ? body.error : 'invalid_response' });
  }
  return body.access_token;
}

const headersFor = (accessToken: string) => ({ authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'svc-gen' });

export async function fetchIdentity(provider: OAuthProviderConfig, accessToken: string): Promise<ProviderIdentity> {
  const { status, body } = await call(provider.userinfoUrl, { headers: headersFor(accessToken) });
  if (status !== 200) throw badRequest('oauth userinfo request failed');
  const subject = body.sub ?? body.id;
  if ((typeof subject !== 'string' && typeof subject !== 'number') || String(subject) === '') {
    throw badRequest('oauth provider returned no subject');
  }
  if (provider.name === 'github') return { subject: String(subject), ...(await githubEmail(provider, accessToken)) };
  // Only `email`: claims like Microsoft's preferred_username are user-editable and unverified.
  const email = body.email;
  if (typeof email !== 'string' || !email.includes('@')) throw badRequest('oauth provider returned no email address');
  const emailVerified = provider.name !== 'microsoft' && body.email_verified === true;
  return { email, subject: String(subject), emailVerified };
}

/** GitHub's `/user/emails` says which addresses are verified; the primary one is the account's. */
async function githubEmail(provider: OAuthProviderConfig, accessToken: string): Promise<{ email: string; emailVerified: boolean }> {
  const url = `${provider.userinfoUrl.replace(/\/+$/, '')}/emails`;
  let response: Response;
  try {
    response = await fetch(url, { headers: headersFor(accessToken), redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    throw unavailable();
  }
  const emails = await response.json().catch(() => null);
  if (response.status !== 200 || !Array.isArray(emails)) throw badRequest('oauth provider returned no email address');
  const primary = emails.find((e) => e?.primary === true && typeof e.email === 'string');
  if (!primary) throw badRequest('oauth provider returned no email address');
  return { email: primary.email, emailVerified: primary.verified === true };
}
