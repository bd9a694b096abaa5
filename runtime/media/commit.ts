/**
 * POST /media/commit: the server reads the uploaded bytes back through a hash
 * (it never trusts a client checksum), checks the announced size, and commits
 * once (its audit entry in the same transaction); a repeated or concurrent
 * commit gets the same metadata and writes no second entry.
 */
import { pipeline } from 'node:stream/promises';
import type { Db } from '../db/index.ts';
import { conflict, HttpError, notFound } from '../http/errors.ts';
import type { TenantScope } from '../tenancy/index.ts';
import { HashingLimit } from './drivers/hashing.ts';
import { MediaTooLargeError, type StorageDriver, type StoredBytes } from './drivers/index.ts';
import { commitPending, findMedia, metadataOf, type MediaAudit, type MediaMetadata } from './store.ts';

/** POST /media/commit: hashes the uploaded bytes itself, then commits once. */
export async function commitUpload(db: Db, driver: StorageDriver, scope: TenantScope, id: string, audit: MediaAudit): Promise<MediaMetadata> {
  const row = await findMedia(db, scope, id);
  if (!row) throw notFound();
  if (row.status === 'committed') return metadataOf(row);
  if (row.expired) throw new HttpError(410, 'upload expired');
  const staged = await driver.head(row.stagingKey!);
  if (!staged) return committedMeanwhile(db, scope, id);
  if (staged.size !== row.size) throw sizeMismatch(row.size, staged.size);
  const stored = await hashStored(driver, row.stagingKey!, row.size);
  if (!stored) return committedMeanwhile(db, scope, id);
  const outcome = await commitPending(db, driver, scope, id, stored, audit);
  if (outcome.kind === 'expired') throw new HttpError(410, 'upload expired');
  if (outcome.kind === 'missing') throw notFound();
  return outcome.metadata;
}

const sizeMismatch = (expected: number, received: number) =>
  new HttpError(422, 'size mismatch', { expected, received });

/** No staged bytes: nothing was uploaded, unless a concurrent commit just moved them. */
async function committedMeanwhile(db: Db, scope: TenantScope, id: string): Promise<MediaMetadata> {
  const row = await findMedia(db, scope, id);
  if (row?.status === 'committed') return metadataOf(row);
  throw conflict('nothing uploaded');
}

/** Streams the staged object back through a hash: the server never trusts a client checksum. */
async function hashStored(driver: StorageDriver, key: string, size: number): Promise<StoredBytes | null> {
  const bytes = await driver.get(key);
  if (!bytes) return null;
  const counter = new HashingLimit(size);
  try {
    await pipeline(bytes, counter, async function drain(source: AsyncIterable<Buffer>) {
      for await (const _chunk of source); // only the hash matters
    });
  } catch (error) {
    if (error instanceof MediaTooLargeError) throw sizeMismatch(size, size + 1);
    throw error;
  }
  return counter.result();
}
