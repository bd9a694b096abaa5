/**
 * Access tokens: HS256 JWTs signed with JWT_SECRET. The algorithm is pinned:
 * `alg: none` or any other algorithm or key is refused.
 */
import { SignJWT, jwtVerify } from 'jose';
import { ROLES, type Role } from '../ir/types.ts';

export interface Principal {
  readonly userId: string;
  readonly role: Role;
  /** The user's bound tenant; null for users not bound to one (platform admins). */
  readonly tenantId: string | null;
  /** The session the access token belongs to (logout revokes it). */
  readonly sessionId: string | null;
  readonly email: string | null;
}

export class InvalidTokenError extends Error {}

const ALG = 'HS256';
const ISSUER = 'svc-gen';

export class TokenSigner {
  private readonly key: Uint8Array;

  constructor(secret: string, private readonly ttlSecs: number) {
    this.key = new TextEncoder().encode(secret);
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
    try {
      const { payload } = await jwtVerify(token, this.key, { algorithms: [ALG], issuer: ISSUER });
      const role = ROLES.find((known) => known === payload.role);
      if (!payload.sub || !role) throw new InvalidTokenError('token lacks subject or role');
      return {
        userId: payload.sub,
        role,
        tenantId: typeof payload.tid === 'string' ? payload.tid : null,
        sessionId: typeof payload.sid === 'string' ? payload.sid : null,
        email: typeof payload.email === 'string' ? payload.email : null,
      };
    } catch (error) {
      if (error instanceof InvalidTokenError) throw error;
      throw new InvalidTokenError('invalid or expired token');
    }
  }
}
