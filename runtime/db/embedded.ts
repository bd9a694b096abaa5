/**
 * Embedded Postgres for development: PGlite in this process, data under a
 * folder, reached through PGlite's own node-postgres adapter with exactly one
 * connection. A lockfile keeps a second process off the data folder.
 */
import { mkdirSync, openSync, closeSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { IMain } from 'pg-promise';
import type { Database } from './types.ts';
import { HandlerRegistry, NOTIFY, quoteChannel, type Notifier } from './notify.ts';

export class EmbeddedLockedError extends Error {
  constructor(dir: string, pid: string) {
    super(`embedded database ${dir} is in use by process ${pid}; stop it or set DATABASE_URL`);
  }
}

export async function openEmbedded(pgp: IMain, dir: string): Promise<Database> {
  mkdirSync(dir, { recursive: true });
  const release = takeLock(join(dir, '..', `${dir.split('/').pop()}.lock`), dir);
  const { PGlite } = await import('@electric-sql/pglite');
  const { createPgConfig } = await import('@electric-sql/pglite/node-postgres');
  const pglite = await PGlite.create(dir);
  const db = pgp(createPgConfig(pglite) as never);
  const notifier = createPgliteNotifier(pglite);
  return {
    db,
    direct: db,
    read: db,
    pgp,
    notifier,
    kind: 'embedded',
    async close() {
      await notifier.close();
      await db.$pool.end();
      await pglite.close();
      release();
    },
  };
}

interface PgliteLike {
  listen(channel: string, cb: (payload: string) => void): Promise<() => Promise<void>>;
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

function createPgliteNotifier(pglite: PgliteLike): Notifier {
  const registry = new HandlerRegistry();
  const unlisten = new Map<string, () => Promise<void>>();
  return {
    async listen(channel, handler) {
      quoteChannel(channel);
      if (registry.add(channel, handler)) {
        unlisten.set(channel, await pglite.listen(channel, (payload) => registry.dispatch(channel, payload)));
      }
      return async () => {
        if (registry.remove(channel, handler)) await unlisten.get(channel)?.();
      };
    },
    async notify(channel, payload) {
      await pglite.query(NOTIFY.text, [channel, payload]);
    },
    async close() {
      for (const stop of unlisten.values()) await stop().catch(() => undefined);
      unlisten.clear();
    },
  };
}

function takeLock(lockPath: string, dir: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = readFileSync(lockPath, 'utf8').trim();
      if (isAlive(Number(pid))) throw new EmbeddedLockedError(dir, pid);
      rmSync(lockPath, { force: true }); // stale lock of a dead process
    }
  }
  throw new EmbeddedLockedError(dir, 'unknown');
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
