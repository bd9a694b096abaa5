/**
 * Media on the local disk (SVC_MEDIA_DIR). Bytes are written to a temporary
 * file and renamed into place once complete, so a reader never sees half a
 * file and a crash leaves only a temporary file behind.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { newId } from '../../ids.ts';
import { HashingLimit } from './hashing.ts';
import type { ByteRange, StorageDriver, StoredBytes } from './types.ts';

/**
 * Read chunk of a served file. Each chunk is a fresh Buffer outside the V8
 * heap, collected only when external memory grows: smaller chunks keep a large
 * download's uncollected garbage (RSS growth) small.
 */
const READ_CHUNK = 16 * 1024;

export function localDriver(dir: string): StorageDriver {
  const root = resolve(dir);
  const tmp = join(root, '.tmp');
  const pathOf = (key: string): string => {
    const path = resolve(root, key);
    if (!path.startsWith(root + sep)) throw new Error(`media key outside the media folder: ${key}`);
    return path;
  };

  return {
    name: 'local',
    async put(key: string, body: Readable, maxBytes: number): Promise<StoredBytes> {
      await mkdir(tmp, { recursive: true });
      const temp = join(tmp, newId());
      const counter = new HashingLimit(maxBytes);
      try {
        await pipeline(body, counter, createWriteStream(temp, { flags: 'wx' }));
        const target = pathOf(key);
        await mkdir(dirname(target), { recursive: true });
        await rename(temp, target);
        return counter.result();
      } catch (error) {
        await rm(temp, { force: true });
        throw error;
      }
    },
    async get(key: string, range?: ByteRange): Promise<Readable | null> {
      const path = pathOf(key);
      if (!(await exists(path))) return null;
      return createReadStream(path, range ? { start: range.start, end: range.end, highWaterMark: READ_CHUNK } : { highWaterMark: READ_CHUNK });
    },
    async head(key: string) {
      try {
        return { size: (await stat(pathOf(key))).size };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw error;
      }
    },
    async delete(key: string) {
      await rm(pathOf(key), { force: true });
    },
    async move(from: string, to: string) {
      const target = pathOf(to);
      await mkdir(dirname(target), { recursive: true });
      try {
        await rename(pathOf(from), target);
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw error;
      }
    },
    async promote(stagedKey: string, contentKey: string) {
      const target = pathOf(contentKey);
      await mkdir(dirname(target), { recursive: true });
      await rename(pathOf(stagedKey), target);
      return contentKey;
    },
    presignPut: async () => null,
    async purgeTemporary(before: Date) {
      let removed = 0;
      for (const name of await readdir(tmp).catch(() => [] as string[])) {
        const path = join(tmp, name);
        const info = await stat(path).catch(() => null);
        if (info && info.mtime < before) {
          await rm(path, { force: true });
          removed++;
        }
      }
      return removed;
    },
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}
