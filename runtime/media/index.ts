/**
 * Media: streamed uploads, ranged and cached serving, presigned direct
 * upload, on local disk or any S3-compatible store (CONTRACT section 10).
 * Records (one per upload) are kept apart from the bytes (one copy per tenant
 * and content); a sweep removes uncommitted uploads and unreferenced bytes.
 */
import { fileURLToPath } from 'node:url';
import { defineCapability } from '../core/index.ts';
import { createDriver, type StorageDriver } from './drivers/index.ts';
import { mediaReferences } from './references.ts';
import { mountMediaRoutes } from './routes.ts';
import { MEDIA_PATHS } from './openapi.ts';
import { UploadSigner } from './signing.ts';
import { startSweeper } from './sweep.ts';

export type { StorageDriver, StoredBytes, ByteRange, PresignedPut } from './drivers/index.ts';
export { createDriver, localDriver, MediaTooLargeError } from './drivers/index.ts';
export { sweepMedia, claimSweep, type SweepOptions, type SweepResult } from './sweep.ts';
export type { MediaMetadata } from './store.ts';

declare module '../core/capability.ts' {
  interface Services {
    media: { readonly driver: StorageDriver };
  }
}

export const media = defineCapability({
  name: 'media',
  provides: ['media'],
  requires: ['auth', 'openapi', 'audit', 'jobs'],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    const config = ctx.config.media;
    const driver = await createDriver(config);
    ctx.services.media = { driver };
    // The session-checking authenticator: the auth capability, which this one requires, provided it.
    const { auth } = ctx.services;
    const signer = new UploadSigner(ctx.config.auth.jwtSecret);
    ctx.services.openapi.add(MEDIA_PATHS);
    const references = mediaReferences(ctx.ir);
    mountMediaRoutes(ctx.router, { db: ctx.db, driver, auth, config, signer, log: ctx.log, audit: ctx.services.audit, jobs: ctx.services.jobs, references });
    const stop = startSweeper(ctx.db, driver, ctx.log, config.sweepIntervalSecs, config.uploadTtlSecs);
    return { stop };
  },
});
