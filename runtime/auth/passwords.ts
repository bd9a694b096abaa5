/**
 * Password hashing: argon2id for every new hash; legacy bcrypt hashes
 * (`$2a$`, `$2b$`, `$2y$`) still verify and are reported as needing a rehash,
 * so the caller upgrades them on the next successful login.
 *
 * Cost parameters default to the OWASP recommendation (m=19456 KiB, t=2, p=1)
 * and may be set with SVC_ARGON2_MEMORY_KIB / SVC_ARGON2_TIME_COST /
 * SVC_ARGON2_PARALLELISM (tests lower them: hashing is CPU-heavy).
 */
import argon2 from 'argon2';
import bcrypt from 'bcryptjs';
import type { Config } from '../config/index.ts';

export type Argon2Params = Config['auth']['argon2'];

const BCRYPT = /^\$2[aby]\$/;

export interface Verification {
  readonly ok: boolean;
  /** The hash is bcrypt or argon2 with other parameters: store a fresh one. */
  readonly rehash: boolean;
}

export class PasswordHasher {
  /** Verified against when the account does not exist, so both paths cost the same. */
  private dummy: Promise<string> | null = null;

  constructor(private readonly params: Argon2Params) {}

  hash(password: string): Promise<string> {
    return argon2.hash(password, { type: argon2.argon2id, ...this.params });
  }

  async verify(hash: string | null, password: string): Promise<Verification> {
    if (hash === null) {
      this.dummy ??= this.hash('dummy-password-for-timing-0');
      await argon2.verify(await this.dummy, password).catch(() => false);
      return { ok: false, rehash: false };
    }
    if (BCRYPT.test(hash)) return { ok: await bcrypt.compare(password, hash), rehash: true };
    if (!hash.startsWith('$argon2')) return { ok: false, rehash: false };
    const ok = await argon2.verify(hash, password).catch(() => false);
    return { ok, rehash: ok && (!hash.startsWith('$argon2id$') || argon2.needsRehash(hash, this.params)) };
  }
}
