/**
 * The sweep: removes presigned uploads never committed (past their expiry),
 * what an upload URL stored after its commit, and bytes no live record has referenced for SVC_MEDIA_UPLOAD_TTL_SECS. It
 * runs once per interval across every instance (core/periodic.ts).
 *
 * Bytes are removed while their blob row is locked, before the row is deleted:
 * an upload of the same content waits on that lock, then stores the bytes anew.
 */
import type { Db } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import type { Logger } from '../log/index.ts';
import { claimTick, periodic } from '../core/periodic.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import type { StorageDriver } from './drivers/index.ts';
import { commitKey } from './keys.ts';

const BATCH = 100;
const LIMIT = sql.raw(String(BATCH));

export interface SweepOptions {
  /** The sweep's clock (tests pass their own). */
  readonly now: Date;
  readonly ttlSecs: number;
}

export interface SweepResult {
  /** Presigned uploads never committed, removed once expired. */
  readonly uploads: number;
  /** Committed presigned uploads whose URL expired: whatever it stored after the commit is removed. */
  readonly staged: number;
  readonly blobs: number;
  /** Temporary files a crashed upload left behind (local driver). */
  readonly temporary: number;
}

export async function sweepMedia(db: Db, driver: StorageDriver, options: SweepOptions): Promise<SweepResult> {
  let uploads = 0;
  let staged = 0;
  let blobs = 0;
  for (let more = true; more; ) {
    const batch = await sweepUploads(db, driver, options.now);
    uploads += batch.uploads;
    staged += batch.staged;
    more = batch.uploads + batch.staged === BATCH;
  }
  for (let removed = BATCH; removed === BATCH; blobs += removed) removed = await sweepBlobs(db, driver, options);
  const before = new Date(options.now.getTime() - options.ttlSecs * 1000);
  const temporary = (await driver.purgeTemporary?.(before)) ?? 0;
  return { uploads, staged, blobs, temporary };
}

/**
 * Rows whose upload URL has expired: a pending row goes with its staged and
 * commit-key bytes; a committed (or deleted) row keeps its record and loses
 * what its URL stored after the commit (an S3 URL takes PUTs until it
 * expires) and a commit key a crash left, unless that key holds its blob.
 */
async function sweepUploads(db: Db, driver: StorageDriver, now: Date): Promise<{ uploads: number; staged: number }> {
  return db.tx('svc-media-sweep-uploads', async (t) => {
    const rows = await t.manyOrNone<{ id: string; tenant_id: string; status: string; staging_key: string; blob_key: string | null }>(compile(sql`
       select m.id, m.tenant_id, m.status, m.staging_key, b.storage_key as blob_key
         from svc_media m left join svc_media_blobs b
           on m.status = 'committed' and b.tenant_id = m.tenant_id and b.sha256 = m.sha256
        where m.staging_key is not null and m.expires_at < ${sql.value(now.toISOString(), 'timestamptz')}
        order by m.expires_at limit ${LIMIT} for update of m skip locked`));
    for (const row of rows) {
      await driver.delete(row.staging_key);
      const sealed = commitKey(row.tenant_id, row.id);
      if (sealed !== row.blob_key) await driver.delete(sealed);
    }
    const pending = rows.filter((row) => row.status === 'pending');
    const committed = rows.filter((row) => row.status === 'committed');
    // By primary key (tenant_id, id): the rows of the batch may be of several tenants.
    const keys = (of: typeof rows) => sql`(tenant_id, id) in (select * from unnest(${sql.value(of.map((row) => row.tenant_id), 'text[]')}, ${sql.value(of.map((row) => row.id), 'text[]')}))`;
    if (pending.length > 0) await t.none(compile(sql`delete from svc_media where ${keys(pending)}`));
    if (committed.length > 0) await t.none(compile(sql`update svc_media set staging_key = null where ${keys(committed)}`));
    return { uploads: pending.length, staged: committed.length };
  });
}

async function sweepBlobs(db: Db, driver: StorageDriver, options: SweepOptions): Promise<number> {
  return db.tx('svc-media-sweep-blobs', async (t) => {
    const rows = await t.manyOrNone<{ tenant: string; sha256: string; storage_key: string }>(compile(sql`
      select tenant_id as tenant, sha256, storage_key from svc_media_blobs
        where refcount = 0
          and unreferenced_since < ${sql.value(options.now.toISOString(), 'timestamptz')} - make_interval(secs => ${sql.value(options.ttlSecs, 'double precision')})
        limit ${LIMIT} for update skip locked`));
    for (const row of rows) await driver.delete(row.storage_key);
    if (rows.length > 0) {
      await t.none(compile(sql`
        delete from svc_media_blobs b
         using unnest(${sql.value(rows.map((row) => row.tenant), 'text[]')}, ${sql.value(rows.map((row) => row.sha256), 'text[]')}) as v(tenant, sha256)
         where b.tenant_id = v.tenant and b.sha256 = v.sha256`));
    }
    return rows.length;
  });
}

const sweepTask = (intervalSecs: number) =>
  ({ name: 'media-sweep', everyMs: Math.max(1, Math.round(intervalSecs * 1000)), lockKey: LOCK_KEYS.periodicMediaSweep });

/** Claims this interval's sweep: true for exactly one instance per interval (core/periodic.ts). */
export async function claimSweep(db: Db, intervalSecs: number): Promise<boolean> {
  return (await claimTick(db, sweepTask(intervalSecs))) !== null;
}

/** Runs the sweep once per interval across instances; returns the function that stops it. */
export function startSweeper(db: Db, driver: StorageDriver, log: Logger, intervalSecs: number, ttlSecs: number): () => Promise<void> {
  const task = periodic(db, log, {
    ...sweepTask(intervalSecs),
    async run() {
      const result = await sweepMedia(db, driver, { now: new Date(), ttlSecs });
      if (result.uploads + result.staged + result.blobs + result.temporary > 0) log.info(result, 'media sweep');
    },
  });
  return () => task.stop();
}
