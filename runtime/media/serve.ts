/**
 * Serving bytes: ETag from the sha256, If-None-Match 304, one Range 206 (416
 * when unsatisfiable), and headers that keep a browser from running what it
 * was sent: nosniff, a sandboxing CSP, a sanitised Content-Disposition.
 */
import type Koa from 'koa';
import { HttpError } from '../http/errors.ts';
import type { ByteRange, StorageDriver } from './drivers/index.ts';
import type { MediaRow } from './store.ts';

/** Kinds a browser may show inline; every other kind is served as an attachment. */
const INLINE = /^(image\/(png|jpeg|gif|webp|avif)|video\/[\w.+-]+|audio\/[\w.+-]+|application\/pdf|text\/plain)$/;

export type RangeAnswer = { kind: 'whole' } | { kind: 'range'; range: ByteRange } | { kind: 'unsatisfiable' };

/**
 * One `bytes=` range against `size`. Several ranges or a header that does not
 * parse are served whole (RFC 9110 lets a server ignore Range).
 */
export function parseRange(header: string | undefined, size: number): RangeAnswer {
  const match = /^bytes=(\d*)-(\d*)$/.exec((header ?? '').trim());
  if (!match || (match[1] === '' && match[2] === '')) return { kind: 'whole' };
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'range', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (match[2] !== '' && Number(match[2]) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'range', range: { start, end } };
}

export const etagOf = (sha256: string) => `"${sha256}"`;

/** True when If-None-Match names this ETag (weak comparison, as RFC 9110 asks for GET). */
export function notModified(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

/** `inline|attachment; filename="ascii"; filename*=UTF-8''percent-encoded` */
export function contentDisposition(filename: string, contentType: string): string {
  const kind = INLINE.test(contentType) ? 'inline' : 'attachment';
  const name = filename || 'download';
  const ascii = name.normalize('NFKD').replace(/[^\x20-\x7e]/g, '').replace(/["\\/;%]/g, '_').trim() || 'download';
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export function setSafetyHeaders(koa: Koa.Context, filename: string, contentType: string): void {
  koa.set('X-Content-Type-Options', 'nosniff');
  koa.set('Content-Security-Policy', "default-src 'none'; sandbox");
  koa.set('Content-Disposition', contentDisposition(filename, contentType));
  koa.set('Cross-Origin-Resource-Policy', 'same-site');
}

/** GET (and HEAD) /media/{id} for a committed record of the caller's scope. */
export async function serveMedia(koa: Koa.Context, driver: StorageDriver, row: MediaRow & { storageKey: string }): Promise<void> {
  const etag = etagOf(row.sha256!);
  koa.set('ETag', etag);
  koa.set('Cache-Control', 'private, no-cache');
  koa.set('Accept-Ranges', 'bytes');
  setSafetyHeaders(koa, row.filename, row.contentType);
  if (notModified(koa.get('if-none-match'), etag)) {
    koa.status = 304;
    return;
  }
  const range = parseRange(koa.get('range'), row.size);
  if (range.kind === 'unsatisfiable') {
    throw new HttpError(416, 'range not satisfiable', {}, { 'Content-Range': `bytes */${row.size}` });
  }
  // Exactly as stored: Koa's `type` setter would add a charset the bytes may not have.
  koa.set('Content-Type', row.contentType);
  if (range.kind === 'range') {
    koa.status = 206;
    koa.set('Content-Range', `bytes ${range.range.start}-${range.range.end}/${row.size}`);
  }
  const length = range.kind === 'range' ? range.range.end - range.range.start + 1 : row.size;
  if (koa.method === 'HEAD') {
    // Headers only: opening the bytes would hold a file or a connection nobody reads.
    koa.status = range.kind === 'range' ? 206 : 200;
    koa.length = length;
    return;
  }
  const bytes = await driver.get(row.storageKey, range.kind === 'range' ? range.range : undefined);
  if (!bytes) throw new Error(`media ${row.id}: bytes missing at ${row.storageKey}`);
  koa.body = bytes;
  koa.length = length;
}
