/**
 * Embedded Postgres for development: PGlite in this process, data under a
 * folder, reached through PGlite's own node-postgres adapter with exactly one
 * connection. A lockfile keeps a second process off the data folder.
 *
 * Everything goes through that one pooled connection, the notifier's LISTEN
 * and NOTIFY too. PGlite's own API (`query`, `exec`, `listen`) is a second
 * client of its one backend that nothing orders against the adapter's: both
 * keep a statement's answer in one shared buffer across an await, so a call
 * of it made while a pooled statement awaited took that statement's answer,
 * and the pooled statement waited forever, holding the pool's only
 * connection: the stalled starts of the audit fold and of the tenant feed
 * (docs/dev.md, "The embedded database"). Notifications are taken from
 * PGlite's protocol stream (`onNotification`), which every pooled answer
 * passes through.
 */
import { mkdirSync, openSync, closeSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { IMain } from 'pg-promise';
import type { Database, Db } from './types.ts';
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
  const notifier = createPgliteNotifier(pglite, db);
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
  onNotification(cb: (channel: string, payload: string) => void): () => void;
}

/**
 * LISTEN, UNLISTEN and NOTIFY as statements of the pool (so never inside
 * another caller's transaction, never between a statement's messages); a
 * notification reaches PGlite's protocol stream with the answer of whichever
 * pooled statement follows its commit, and is dispatched from there.
 */
function createPgliteNotifier(pglite: PgliteLike, db: Db): Notifier {
  const registry = new HandlerRegistry();
  const off = pglite.onNotification((channel, payload) => registry.dispatch(channel, payload));
  return {
    async listen(channel, handler) {
      const quoted = quoteChannel(channel);
      if (registry.add(channel, handler)) await db.none(`LISTEN ${quoted}`);
      return async () => {
        if (registry.remove(channel, handler)) await db.none(`UNLISTEN ${quoted}`).catch(() => undefined);
      };
    },
    async notify(channel, payload) {
      await db.one(NOTIFY.text, [channel, payload]);
    },
    async close() {
      off();
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
