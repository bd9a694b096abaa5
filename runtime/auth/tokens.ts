/**
 * Access tokens: HS256 JWTs signed with JWT_SECRET. The algorithm is pinned:
 * `alg: none` or any other algorithm or key is refused.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
// jose's entry points one by one: its index loads every JOSE module (~45 files, ~40 ms more of a cold start).
import { SignJWT } from 'jose/jwt/sign';
import { jwtVerify } from 'jose/jwt/verify';
import { ROLES, type Role } from '../ir/types.ts';
import type { Principal } from '../core/principal.ts';

export type { Principal };

export class InvalidTokenError extends Error {}

const ALG = 'HS256';
const ISSUER = 'svc-gen';

/** Verified tokens remembered: a signature stays valid, so only expiry needs re-checking. */
const VERIFIED_CACHE_MAX = 10_000;

export class TokenSigner {
  /** A KeyObject, imported once: a raw secret makes jose import the key on every call. */
  private readonly key: KeyObject;
  private readonly verified = new Map<string, { principal: Principal; exp: number }>();

  constructor(secret: string, private readonly ttlSecs: number) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  async sign(principal: Principal): Promise<string> {
    const claims: Record<string, unknown> = { role: principal.role, tid: principal.tenantId };
    if (principal.sessionId) claims.sid = principal.sessionId;
    if (principal.email) claims.email = principal.email;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: ALG, typ: 'JWT' })
      .setSubject(principal.userId)
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + this.ttlSecs)
      .sign(this.key);
  }

  async verify(token: string): Promise<Principal> {
    const known = this.verified.get(token);
    if (known && known.exp > Date.now() / 1000) return known.principal;
    const { principal, exp } = await this.verifySignature(token);
    if (this.verified.size >= VERIFIED_CACHE_MAX) this.verified.clear();
    this.verified.set(token, { principal, exp });
    return principal;
  }

  private async verifySignature(token: string): Promise<{ principal: Principal; exp: number }> {
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: [ALG], issuer: ISSUER });
      const role = ROLES.find((known) => known === payload.role);
      if (!payload.sub || !role || typeof payload.exp !== 'number') throw new InvalidTokenError('token lacks subject, role or expiry');
      const principal: Principal = {
        userId: payload.sub,
        role,
        tenantId: typeof payload.tid === 'string' ? payload.tid : null,
        sessionId: typeof payload.sid === 'string' ? payload.sid : null,
        email: typeof payload.email === 'string' ? payload.email : null,
      };
      return { principal, exp: payload.exp };
    } catch (error) {
      if (error instanceof InvalidTokenError) throw error;
      throw new InvalidTokenError('invalid or expired token');
    }
  }
}
