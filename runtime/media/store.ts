/**
 * Media records and the bytes they share. A record is one upload (its own id
 * and owner); a blob is the stored bytes of one content within one tenant,
 * counted by the committed live records that reference it. Deleting a record
 * only lowers the count; the sweep removes bytes nobody references.
 */
import { isoUtcSql, type Db, type Tx } from '../db/index.ts';
import { Params } from '../records/sql.ts';
import { TenantScope } from '../tenancy/index.ts';
import type { StorageDriver } from './drivers/index.ts';
import { blobKey, commitKey } from './keys.ts';
import { stillReferenced, type MediaReferences } from './references.ts';

export interface MediaMetadata {
  readonly id: string;
  readonly filename: string;
  readonly contentType: string;
  readonly size: number;
  readonly sha256: string;
  readonly createdAt: string;
}

export interface MediaRow {
  readonly id: string;
  readonly tenantId: string | null;
  readonly ownerKind: 'user' | 'worker';
  readonly ownerId: string;
  readonly filename: string;
  readonly contentType: string;
  readonly size: number;
  readonly sha256: string | null;
  readonly status: 'pending' | 'committed';
  readonly stagingKey: string | null;
  /** Where the bytes are (committed records only). */
  readonly storageKey: string | null;
  readonly expired: boolean;
  readonly createdAt: string;
}


const ROW = `m.id, m.tenant_id, m.owner_kind, m.owner_id, m.filename, m.content_type, m.size, m.sha256, m.status,
  m.staging_key, b.storage_key, coalesce(m.expires_at < now(), false) as expired, ${isoUtcSql('m.created_at')} as created_at`;

const FROM = `svc_media m left join svc_media_blobs b
  on m.status = 'committed' and b.sha256 = m.sha256 and b.tenant_id is not distinct from m.tenant_id`;

function toRow(row: any): MediaRow {
  return {
    id: row.id, tenantId: row.tenant_id, ownerKind: row.owner_kind, ownerId: row.owner_id, filename: row.filename,
    contentType: row.content_type, size: Number(row.size), sha256: row.sha256, status: row.status,
    stagingKey: row.staging_key, storageKey: row.storage_key, expired: row.expired, createdAt: row.created_at,
  };
}

export function metadataOf(row: MediaRow): MediaMetadata {
  return {
    id: row.id, filename: row.filename, contentType: row.contentType, size: row.size, sha256: row.sha256!, createdAt: row.createdAt,
  };
}

/** A live record of the scope (pending or committed), or null: unknown and foreign ids look the same. */
export async function findMedia(db: Db | Tx, scope: TenantScope, id: string, lock = false): Promise<MediaRow | null> {
  const p = new Params(scope);
  const text = `select ${ROW} from ${FROM} where m.id = ${p.add(id, 'text')} and m.deleted_at is null and ${scope.sql(p, 'm.tenant_id')}
    ${lock ? 'for update of m' : ''}`;
  const row = await db.oneOrNone(text, p.values);
  return row ? toRow(row) : null;
}

/** Runs in the transaction that commits or deletes a record: the audit entry of the change. */
export type MediaAudit = (t: Tx, media: { readonly id: string; readonly metadata: MediaMetadata | null }) => Promise<void>;

export interface NewMedia {
  readonly id: string;
  readonly scope: TenantScope;
  readonly owner: { readonly kind: 'user' | 'worker'; readonly id: string };
  readonly filename: string;
  readonly contentType: string;
}

/**
 * Takes a reference on the tenant's blob of these bytes, creating it from the
 * staged bytes when there is none. Staged bytes that duplicate a blob are
 * returned as `discard`: the caller removes them once the transaction commits.
 */
async function referenceBlob(
  t: Tx, driver: StorageDriver, tenantId: string | null, stored: { size: number; sha256: string }, stagedKey: string,
): Promise<{ discard: string | null }> {
  const row = await t.one<{ inserted: boolean }>(
    `insert into svc_media_blobs (tenant_id, sha256, size, storage_key, refcount) values ($1, $2, $3, $4, 1)
     on conflict (coalesce(tenant_id, ''), sha256)
       do update set refcount = svc_media_blobs.refcount + 1, unreferenced_since = null
     returning (xmax = 0) as inserted`,
    [tenantId, stored.sha256, stored.size, stagedKey],
  );
  if (!row.inserted) return { discard: stagedKey };
  // Promoted while the new blob row is locked: the sweep cannot remove these bytes meanwhile.
  const key = await driver.promote(stagedKey, blobKey(tenantId, stored.sha256));
  if (key !== stagedKey) {
    const p = new Params(TenantScope.of(tenantId));
    await t.none(`update svc_media_blobs set storage_key = ${p.add(key, 'text')}
      where sha256 = ${p.add(stored.sha256, 'text')} and ${TenantScope.of(tenantId).sql(p, 'tenant_id')}`, p.values);
  }
  return { discard: null };
}

/** Records an upload whose bytes are staged at `stagedKey` (POST /media). */
export async function insertCommitted(
  db: Db, driver: StorageDriver, media: NewMedia, stored: { size: number; sha256: string }, stagedKey: string, audit: MediaAudit,
): Promise<MediaMetadata> {
  const tenantId = media.scope.tenantId;
  const { row, discard } = await db.tx('svc-media-upload', async (t) => {
    const { discard } = await referenceBlob(t, driver, tenantId, stored, stagedKey);
    const row = await t.one(
      `insert into svc_media as m (id, tenant_id, owner_kind, owner_id, filename, content_type, size, sha256, status)
       values ($1, $2, $3, $4, $5, $6, $7, $8, 'committed')
       returning ${ROW.replace(/b\.storage_key/, 'null as storage_key')}`,
      [media.id, tenantId, media.owner.kind, media.owner.id, media.filename, media.contentType, stored.size, stored.sha256],
    );
    await audit(t, { id: media.id, metadata: metadataOf(toRow(row)) });
    return { row, discard };
  });
  if (discard) await driver.delete(discard);
  return metadataOf(toRow(row));
}

/** Records a presigned upload waiting for its bytes. */
export async function insertPending(
  db: Db, media: NewMedia, size: number, stagingKey: string, ttlSecs: number,
): Promise<{ expiresAt: string }> {
  return db.one(
    `insert into svc_media (id, tenant_id, owner_kind, owner_id, filename, content_type, size, status, staging_key, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, 'pending', $8, now() + make_interval(secs => $9))
     returning ${isoUtcSql('expires_at')} as "expiresAt"`,
    [media.id, media.scope.tenantId, media.owner.kind, media.owner.id, media.filename, media.contentType, size, stagingKey, ttlSecs],
  );
}

/**
 * Commits the pending upload `row` (locked by the caller's transaction) whose
 * bytes, at `key`, hashed to `stored`. The staging key and the URL's expiry
 * stay on the row: the sweep removes what a replayed URL stores meanwhile.
 * Returns the key of bytes that duplicate a blob, to delete once committed.
 */
export async function commitPending(
  t: Tx, driver: StorageDriver, row: MediaRow, stored: { size: number; sha256: string }, key: string, audit: MediaAudit,
): Promise<{ metadata: MediaMetadata; discard: string | null }> {
  const { discard } = await referenceBlob(t, driver, row.tenantId, stored, key);
  const updated = await t.one(
    `update svc_media m set status = 'committed', sha256 = $2, size = $3
      where id = $1 returning ${ROW.replace(/b\.storage_key/, 'null as storage_key')}`,
    [row.id, stored.sha256, stored.size],
  );
  const metadata = metadataOf(toRow(updated));
  await audit(t, { id: row.id, metadata });
  return { metadata, discard };
}

/**
 * Deletes a record for its uploader or an Admin/Manager of its scope; false
 * when the caller may not (the route answers 404, as for an unknown id); 409
 * while a live record's Media field holds it. The bytes stay while another
 * media record references them.
 */
export async function deleteMedia(
  db: Db, driver: StorageDriver, references: MediaReferences, scope: TenantScope, id: string,
  actor: { kind: 'user' | 'worker'; id: string; manager: boolean }, audit: MediaAudit,
): Promise<boolean> {
  const p = new Params(scope);
  const owner = actor.manager ? 'true' : `(m.owner_kind = ${p.add(actor.kind, 'text')} and m.owner_id = ${p.add(actor.id, 'text')})`;
  const text = `update svc_media m set deleted_at = now()
     where m.id = ${p.add(id, 'text')} and m.deleted_at is null and ${scope.sql(p, 'm.tenant_id')} and ${owner}
     returning m.id, m.status, m.sha256, m.tenant_id, m.staging_key`;
  const deleted = await db.tx('svc-media-delete', async (t) => {
    const row = await t.oneOrNone(text, p.values);
    if (row?.status === 'committed') {
      // Read after the update took the row lock; the transaction rolls back with the 409.
      const holders = await references.holding(t, row.tenant_id, id);
      if (holders.length > 0) throw stillReferenced(holders);
      const q = new Params(TenantScope.of(row.tenant_id));
      await t.none(
        `update svc_media_blobs set refcount = refcount - 1,
                unreferenced_since = case when refcount = 1 then now() else unreferenced_since end
          where sha256 = ${q.add(row.sha256, 'text')} and ${TenantScope.of(row.tenant_id).sql(q, 'tenant_id')}`,
        q.values,
      );
    }
    if (row) await audit(t, { id, metadata: null });
    return row;
  });
  if (deleted?.status === 'pending' && deleted.staging_key) {
    await driver.delete(deleted.staging_key);
    await driver.delete(commitKey(deleted.tenant_id, deleted.id)); // a commit that failed after moving the bytes
  }
  return deleted !== null;
}
