/**
 * Upload URLs of the local driver: `PUT /media/upload/{id}?expires=&sig=`,
 * an HMAC over the id and the expiry with a key derived from JWT_SECRET (never
 * the secret itself), so the URL alone authorises one upload until it expires.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

export class UploadSigner {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'svc-gen', 'media upload url', 32));
  }

  sign(id: string, expiresAtSecs: number): string {
    return createHmac('sha256', this.key).update(`${id}.${expiresAtSecs}`).digest('base64url');
  }

  /** True when `sig` signs this id and expiry and the expiry has not passed. */
  verify(id: string, expires: string, sig: string, nowSecs = Date.now() / 1000): boolean {
    if (!/^\d{1,12}$/.test(expires) || Number(expires) < nowSecs) return false;
    const expected = Buffer.from(this.sign(id, Number(expires)));
    const given = Buffer.from(sig);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
