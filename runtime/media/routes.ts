/**
 * The media routes (CONTRACT section 10). Every route authenticates; every
 * lookup is scoped, so another tenant's media answers 404 like an unknown id.
 */
import type Koa from 'koa';
import type Router from '@koa/router';
import type { Authenticator } from '../auth/index.ts';
import type { MediaConfig } from '../config/index.ts';
import type { Db } from '../db/index.ts';
import { badRequest, conflict, HttpError, notFound } from '../http/errors.ts';
import { newId } from '../ids.ts';
import type { Logger } from '../log/index.ts';
import { uploaderCaller, userCaller, type MediaCaller } from './caller.ts';
import { MediaTooLargeError, type StorageDriver } from './drivers/index.ts';
import { stagingKey } from './keys.ts';
import { normaliseType, receiveFile, unsupportedType } from './receive.ts';
import { serveMedia } from './serve.ts';
import type { UploadSigner } from './signing.ts';
import { deleteMedia, findMedia, insertCommitted, insertPending, type MediaAudit, type MediaMetadata } from './store.ts';
import type { JobQueue } from '../jobs/index.ts';
import { workerActor, type AuditActor, type AuditLog } from '../audit/index.ts';
import { commitUpload } from './commit.ts';
import { listMedia, pageLimit } from './list.ts';
import { claimUpload, keepUpload, releaseUpload } from './claim.ts';
import type { MediaReferences } from './references.ts';

/** Refused unless SVC_MEDIA_ALLOWED_TYPES lists them: a browser would run them on our origin. */
const ACTIVE_TYPES = new Set(['text/html', 'image/svg+xml', 'application/xhtml+xml']);

export interface MediaRoutesDeps {
  readonly db: Db;
  readonly driver: StorageDriver;
  readonly auth: Authenticator;
  readonly config: MediaConfig;
  readonly signer: UploadSigner;
  readonly log: Logger;
  readonly audit: AuditLog;
  /** Worker tokens and leases (POST /media by a worker). */
  readonly jobs: JobQueue;
  /** Records whose Media fields hold a media id (DELETE refuses those). */
  readonly references: MediaReferences;
}

/**
 * The audit entry of a media change (CONTRACT section 9: `media.upload`,
 * `media.delete`), written by the store in the transaction of the change.
 */
function auditOf(audit: AuditLog, koa: Koa.Context, caller: MediaCaller, action: 'media.upload' | 'media.delete'): MediaAudit {
  const actor: AuditActor = caller.kind === 'worker' ? workerActor(caller.id) : { kind: 'user', id: caller.id, role: caller.role };
  const request = audit.requestOf(koa);
  return (t, media) => audit.record(t, {
    action, tenantId: caller.scope.tenantId, actor, entityType: 'Media', entityId: media.id, request,
    changes: media.metadata
      ? { filename: media.metadata.filename, contentType: media.metadata.contentType, size: media.metadata.size, sha256: media.metadata.sha256 }
      : null,
  });
}

const payloadTooLarge = () => new HttpError(413, 'payload_too_large');

/** What a failed upload body answers: 413 past the limit, 400 when the client went away. */
function uploadError(koa: Koa.Context, error: unknown): unknown {
  if (error instanceof MediaTooLargeError) return payloadTooLarge();
  if (!(error instanceof HttpError) && koa.req.destroyed && !koa.req.complete) return badRequest('upload aborted');
  return error;
}
const withUrl = (media: MediaMetadata) => ({ ...media, url: `/media/${media.id}` });

export function mountMediaRoutes(router: Router, deps: MediaRoutesDeps): void {
  const { db, driver, auth, config } = deps;
  const accepts = (type: string) => !ACTIVE_TYPES.has(type) || config.allowedTypes.includes(type);

  router.post('/media', async (koa) => {
    const caller = await uploaderCaller(koa, auth, deps.jobs);
    const declared = Number(koa.get('content-length') || 0);
    // A multipart body carries a little more than its file; far more cannot fit.
    if (declared > config.maxBytes + 64 * 1024) throw closing(koa, payloadTooLarge());
    const id = newId();
    const key = stagingKey(caller.scope.tenantId, id);
    let media: MediaMetadata;
    try {
      media = await receiveFile(koa.req, {
        accepts,
        store: async (file, part) => {
          const stored = await driver.put(key, file, config.maxBytes);
          const owner = { kind: caller.kind, id: caller.id };
          const media = { id, scope: caller.scope, owner, filename: safeFilename(part.filename), contentType: part.contentType };
          try {
            return await insertCommitted(db, driver, media, stored, key, auditOf(deps.audit, koa, caller, 'media.upload'));
          } catch (error) {
            await driver.delete(key).catch(() => undefined); // not recorded: not kept
            throw error;
          }
        },
      });
    } catch (error) {
      throw closing(koa, uploadError(koa, error));
    }
    koa.status = 201;
    koa.body = withUrl(media);
  });

  router.post('/media/presign', async (koa) => {
    const caller = await userCaller(koa, auth);
    const input = presignInput(koa.request.body);
    if (!accepts(input.contentType)) throw unsupportedType(input.contentType);
    if (input.size > config.maxBytes) throw payloadTooLarge();
    const id = newId();
    const key = stagingKey(caller.scope.tenantId, id);
    const media = { id, scope: caller.scope, owner: { kind: caller.kind, id: caller.id }, filename: input.filename, contentType: input.contentType };
    const { expiresAt } = await insertPending(db, media, input.size, key, config.uploadTtlSecs);
    const presigned = await driver.presignPut(key, { ...input, expiresInSecs: config.uploadTtlSecs });
    koa.status = 201;
    koa.body = { id, method: 'PUT', expiresAt, ...(presigned
      ? { uploadUrl: presigned.url, headers: presigned.headers }
      : localUpload(baseUrl(koa, config), deps.signer, id, expiresAt, input.contentType)) };
  });

  router.put('/media/upload/:id', async (koa) => {
    const { expires, sig } = koa.query;
    if (typeof expires !== 'string' || typeof sig !== 'string' || !deps.signer.verify(koa.params.id, expires, sig)) {
      throw closing(koa, new HttpError(403, 'invalid or expired upload url'));
    }
    const id = koa.params.id;
    const claim = await claimUpload(db, id);
    if (claim.kind === 'missing') throw closing(koa, notFound());
    if (claim.kind === 'taken') throw closing(koa, conflict('this upload URL has taken its body'));
    try {
      if (Number(koa.get('content-length') || 0) > claim.size) throw payloadTooLarge();
      await driver.put(claim.stagingKey, koa.req, claim.size);
    } catch (error) {
      // A claim left behind (database gone) only spends the URL.
      await releaseUpload(db, id).catch(() => undefined);
      throw closing(koa, uploadError(koa, error));
    }
    await keepUpload(db, id);
    koa.status = 200;
    koa.body = {};
  });

  router.post('/media/commit', async (koa) => {
    const caller = await userCaller(koa, auth);
    const body = koa.request.body as { id?: unknown } | undefined;
    if (typeof body?.id !== 'string' || body.id === '') throw badRequest('id is required', { field: 'id' });
    koa.status = 201;
    koa.body = withUrl(await commitUpload(db, driver, caller, body.id, auditOf(deps.audit, koa, caller, 'media.upload')));
  });

  router.get('/media', async (koa) => {
    const caller = await userCaller(koa, auth);
    const q = (name: string) => [koa.query[name]].flat()[0];
    koa.body = await listMedia(db, caller.scope, q('after'), pageLimit(q('limit')));
  });

  router.get('/media/:id/metadata', async (koa) => {
    const caller = await userCaller(koa, auth);
    const row = await findMedia(db, caller.scope, koa.params.id);
    if (!row || row.status !== 'committed') throw notFound();
    koa.body = { id: row.id, filename: row.filename, contentType: row.contentType, size: row.size, sha256: row.sha256, createdAt: row.createdAt };
  });

  router.get('/media/:id', async (koa) => {
    const caller = await userCaller(koa, auth);
    const row = await findMedia(db, caller.scope, koa.params.id);
    if (!row || row.status !== 'committed' || !row.storageKey) throw notFound();
    await serveMedia(koa, driver, { ...row, storageKey: row.storageKey });
  });

  router.delete('/media/:id', async (koa) => {
    const caller = await userCaller(koa, auth);
    if (!(await deleteMedia(db, driver, deps.references, caller.scope, koa.params.id, caller, auditOf(deps.audit, koa, caller, 'media.delete')))) throw notFound();
    koa.status = 204;
  });
}

function presignInput(body: unknown): { filename: string; contentType: string; size: number } {
  const input = (body ?? {}) as Record<string, unknown>;
  if (typeof input.filename !== 'string' || input.filename.trim() === '') throw badRequest('filename is required', { field: 'filename' });
  if (typeof input.contentType !== 'string' || input.contentType.trim() === '') throw badRequest('contentType is required', { field: 'contentType' });
  if (typeof input.size !== 'number' || !Number.isSafeInteger(input.size) || input.size < 1) {
    throw badRequest('size must be a positive integer', { field: 'size' });
  }
  return { filename: safeFilename(input.filename), contentType: normaliseType(input.contentType), size: input.size };
}

/** SVC_MEDIA_PUBLIC_URL, else the scheme and Host this request came with. */
function baseUrl(koa: Koa.Context, config: MediaConfig): string {
  return config.publicUrl ?? `${koa.protocol}://${koa.host}`;
}

function localUpload(base: string, signer: UploadSigner, id: string, expiresAt: string, contentType: string) {
  const expires = Math.floor(Date.parse(expiresAt) / 1000);
  const query = new URLSearchParams({ expires: String(expires), sig: signer.sign(id, expires) });
  return { uploadUrl: `${base}/media/upload/${id}?${query}`, headers: { 'content-type': contentType } };
}

/** The name without any folder part or control characters, at most 255 characters. */
function safeFilename(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  return base.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255) || 'upload';
}

/**
 * An upload refused mid-stream: answer at once and close the connection, so
 * the client stops sending. What it already sent is read and discarded (not
 * stored), for a short while, so the answer is not lost to a reset.
 */
function closing(koa: Koa.Context, error: unknown): unknown {
  koa.set('Connection', 'close');
  const req = koa.req;
  // Held here: once the response is done, Node detaches the socket from the
  // request, and `req.socket` is null by the time the timer fires.
  const socket = req.socket;
  koa.res.once('finish', () => {
    if (req.readableEnded) return;
    const timer = setTimeout(() => socket?.destroy(), 2000);
    timer.unref();
    req.once('end', () => clearTimeout(timer));
    req.resume();
  });
  return error;
}
