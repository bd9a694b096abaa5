/**
 * The OAuth2 / OIDC client side: the authorization URL, the code exchange
 * (client_secret_post with the PKCE verifier) and the userinfo read.
 */
import { decodeJwt } from 'jose';
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
  readonly subject: string | null;
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

/** Exchanges the code; checks the ID token's nonce and audience when the provider sends one. */
export async function exchangeCode(
  provider: OAuthProviderConfig, code: string, codeVerifier: string, redirectUri: string, nonce: string,
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
  if (typeof body.id_token === 'string') checkIdToken(body.id_token, provider.clientId, nonce);
  return body.access_token;
}

/**
 * The ID token came straight from the token endpoint over TLS, so its issuer
 * is authenticated by the channel (OIDC Core 3.1.3.7); what must still be
 * checked is that it was minted for this client and this request (nonce).
 */
function checkIdToken(idToken: string, clientId: string, nonce: string): void {
  let claims: ReturnType<typeof decodeJwt>;
  try {
    claims = decodeJwt(idToken);
  } catch {
    throw badRequest('oauth id_token is malformed');
  }
  const audience = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (claims.nonce !== nonce) throw badRequest('oauth id_token nonce mismatch');
  if (!audience.includes(clientId)) throw badRequest('oauth id_token audience mismatch');
}

export async function fetchIdentity(provider: OAuthProviderConfig, accessToken: string): Promise<ProviderIdentity> {
  const { status, body } = await call(provider.userinfoUrl, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'svc-gen' },
  });
  if (status !== 200) throw badRequest('oauth userinfo request failed');
  // Linking by email is only sound when the provider vouches for the address.
  if (body.email_verified === false || body.verified_email === false) throw badRequest('oauth email address is not verified');
  // Only `email`: claims like Microsoft's preferred_username are user-editable and unverified.
  const email = body.email;
  if (typeof email !== 'string' || !email.includes('@')) throw badRequest('oauth provider returned no email address');
  const subject = body.sub ?? body.id;
  return { email, subject: subject === undefined ? null : String(subject) };
}
