/**
 * POST /media/commit: the server reads the uploaded bytes back through a hash
 * (it never trusts a client checksum), checks the announced size, and commits
 * once (its audit entry in the same transaction); a repeated or concurrent
 * commit gets the same metadata and writes no second entry.
 *
 * The whole commit holds the record's row lock. It first moves the staged
 * bytes to the upload's commit key, which no upload URL writes, then hashes
 * and keeps that key: the sha256 recorded is the hash of the bytes served, by
 * construction, whatever PUTs to the upload URL race with it.
 */
import { pipeline } from 'node:stream/promises';
import type { Db } from '../db/index.ts';
import { conflict, HttpError, notFound } from '../http/errors.ts';
import type { MediaCaller } from './caller.ts';
import { HashingLimit } from './drivers/hashing.ts';
import { MediaTooLargeError, type StorageDriver, type StoredBytes } from './drivers/index.ts';
import { commitKey } from './keys.ts';
import { commitPending, findMedia, metadataOf, type MediaAudit, type MediaMetadata, type MediaRow } from './store.ts';

/**
 * POST /media/commit, for the uploader only: anyone else (an Admin too) gets
 * 404, as for an unknown id. Committing makes bytes someone else sent into a
 * servable item under their name; an Admin or Manager may still delete it.
 */
export async function commitUpload(
  db: Db, driver: StorageDriver, caller: Pick<MediaCaller, 'kind' | 'id' | 'scope'>, id: string, audit: MediaAudit,
): Promise<MediaMetadata> {
  const { metadata, discard } = await db.tx('svc-media-commit', async (t) => {
    const row = await findMedia(t, caller.scope, id, true);
    if (!row || row.ownerKind !== caller.kind || row.ownerId !== caller.id) throw notFound();
    if (row.status === 'committed') return { metadata: metadataOf(row), discard: null };
    if (row.expired) throw new HttpError(410, 'upload expired');
    const key = await sealStaged(driver, row);
    return commitPending(t, driver, row, await hashStored(driver, key, row.size), key, audit);
  });
  if (discard) await driver.delete(discard);
  return metadata;
}

/**
 * Moves the staged bytes to the commit key and returns it. Staged bytes gone
 * while the commit key holds some: an earlier commit moved them and failed
 * (or crashed) before its transaction committed; they are used as they are.
 */
async function sealStaged(driver: StorageDriver, row: MediaRow): Promise<string> {
  const key = commitKey(row.tenantId, row.id);
  await driver.move(row.stagingKey!, key);
  const sealed = await driver.head(key);
  if (!sealed) throw conflict('nothing uploaded');
  if (sealed.size !== row.size) throw sizeMismatch(row.size, sealed.size);
  return key;
}

const sizeMismatch = (expected: number, received: number) =>
  new HttpError(422, 'size mismatch', { expected, received });

/** Streams the sealed object back through a hash: the server never trusts a client checksum. */
async function hashStored(driver: StorageDriver, key: string, size: number): Promise<StoredBytes> {
  const bytes = await driver.get(key);
  if (!bytes) throw conflict('nothing uploaded');
  const counter = new HashingLimit(size);
  try {
    await pipeline(bytes, counter, async function drain(source: AsyncIterable<Buffer>) {
      for await (const _chunk of source); // only the hash matters
    });
  } catch (error) {
    if (error instanceof MediaTooLargeError) throw sizeMismatch(size, size + 1);
    throw error;
  }
  const stored = counter.result();
  if (stored.size !== size) throw sizeMismatch(size, stored.size);
  return stored;
}
