/**
 * Media records and the bytes they share. A record is one upload (its own id
 * and owner); a blob is the stored bytes of one content within one tenant,
 * counted by the committed live records that reference it. Deleting a record
 * only lowers the count; the sweep removes bytes nobody references.
 */
import { isoUtcSql, type Db, type Tx } from '../db/index.ts';
import { compile, sql, type Sql } from '../sql/index.ts';
import { TenantScope, tenantOf } from '../tenancy/index.ts';
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


const COLUMNS = (storageKey: Sql) => sql`m.id, m.tenant_id, m.owner_kind, m.owner_id, m.filename, m.content_type, m.size, m.sha256,
  m.status, m.staging_key, ${storageKey}, coalesce(m.expires_at < now(), false) as expired, ${sql.raw(isoUtcSql('m.created_at'))} as created_at`;
/** A record with where its bytes are (the joined blob's key). */
const ROW = COLUMNS(sql`b.storage_key`);
/** A record just written, before its blob is looked up. */
const WRITTEN = COLUMNS(sql`null as storage_key`);

const FROM = sql`svc_media m left join svc_media_blobs b
  on m.status = 'committed' and b.tenant_id = m.tenant_id and b.sha256 = m.sha256`;

/** Every statement on a scope's media renders that scope: compiled only when it did. */
const scoped = (scope: TenantScope, statement: Sql) => compile(statement, { scope });

function toRow(row: any): MediaRow {
  return {
    id: row.id, tenantId: tenantOf(row.tenant_id), ownerKind: row.owner_kind, ownerId: row.owner_id, filename: row.filename,
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
  const row = await db.oneOrNone(scoped(scope, sql`
    select ${ROW} from ${FROM} where m.id = ${sql.value(id, 'text')} and m.deleted_at is null and ${scope.predicate('m')}
    ${lock ? sql`for update of m` : sql.empty}`));
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
  const scope = TenantScope.of(tenantId);
  const row = await t.one<{ inserted: boolean }>(scoped(scope, sql`
    insert into svc_media_blobs (tenant_id, sha256, size, storage_key, refcount)
    values (${scope.stamp()}, ${sql.value(stored.sha256)}, ${sql.value(stored.size)}, ${sql.value(stagedKey)}, 1)
    on conflict (tenant_id, sha256)
      do update set refcount = svc_media_blobs.refcount + 1, unreferenced_since = null
    returning (xmax = 0) as inserted`));
  if (!row.inserted) return { discard: stagedKey };
  // Promoted while the new blob row is locked: the sweep cannot remove these bytes meanwhile.
  const key = await driver.promote(stagedKey, blobKey(tenantId, stored.sha256));
  if (key !== stagedKey) {
    await t.none(scoped(scope, sql`update svc_media_blobs set storage_key = ${sql.value(key, 'text')}
      where sha256 = ${sql.value(stored.sha256, 'text')} and ${scope.predicate(null)}`));
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
    const row = await t.one(scoped(media.scope, sql`
      insert into svc_media as m (id, tenant_id, owner_kind, owner_id, filename, content_type, size, sha256, status)
      values (${sql.value(media.id)}, ${media.scope.stamp()}, ${sql.value(media.owner.kind)}, ${sql.value(media.owner.id)},
              ${sql.value(media.filename)}, ${sql.value(media.contentType)}, ${sql.value(stored.size)}, ${sql.value(stored.sha256)}, 'committed')
      returning ${WRITTEN}`));
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
  return db.one(scoped(media.scope, sql`
    insert into svc_media (id, tenant_id, owner_kind, owner_id, filename, content_type, size, status, staging_key, expires_at)
    values (${sql.value(media.id)}, ${media.scope.stamp()}, ${sql.value(media.owner.kind)}, ${sql.value(media.owner.id)},
            ${sql.value(media.filename)}, ${sql.value(media.contentType)}, ${sql.value(size)}, 'pending', ${sql.value(stagingKey)},
            now() + make_interval(secs => ${sql.value(ttlSecs)}))
    returning ${sql.raw(isoUtcSql('expires_at'))} as "expiresAt"`));
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
  const updated = await t.one(compile(sql`
    update svc_media m set status = 'committed', sha256 = ${sql.value(stored.sha256)}, size = ${sql.value(stored.size)}
     where id = ${sql.value(row.id)} and ${TenantScope.of(row.tenantId).predicate('m')} returning ${WRITTEN}`));
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
  const owner = actor.manager ? sql`true` : sql`(m.owner_kind = ${sql.value(actor.kind, 'text')} and m.owner_id = ${sql.value(actor.id, 'text')})`;
  const deleting = scoped(scope, sql`update svc_media m set deleted_at = now()
     where m.id = ${sql.value(id, 'text')} and m.deleted_at is null and ${scope.predicate('m')} and ${owner}
     returning m.id, m.status, m.sha256, m.tenant_id, m.staging_key`);
  const deleted = await db.tx('svc-media-delete', async (t) => {
    const row = await t.oneOrNone(deleting);
    if (row?.status === 'committed') {
      // Read after the update took the row lock; the transaction rolls back with the 409.
      const holders = await references.holding(t, row.tenant_id, id);
      if (holders.length > 0) throw stillReferenced(holders);
      const blobScope = TenantScope.of(row.tenant_id);
      await t.none(scoped(blobScope, sql`
        update svc_media_blobs set refcount = refcount - 1,
               unreferenced_since = case when refcount = 1 then now() else unreferenced_since end
         where sha256 = ${sql.value(row.sha256, 'text')} and ${blobScope.predicate(null)}`));
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
