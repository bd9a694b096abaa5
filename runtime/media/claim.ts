/**
 * The one body of an upload URL (PUT /media/upload/{id}). A PUT claims the
 * pending record before it reads a byte (one conditional update, so two PUTs
 * cannot both win); a body that fails midway releases the claim, so the URL
 * may be retried; a stored body keeps it for good. A process that dies
 * mid-body leaves its claim: that URL is spent, the client presigns again.
 *
 * The URL names the media's tenant beside its id (both signed), so every
 * statement here is scoped like a request's (one shard on Citus, ADR 025).
 */
import type { Db } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import type { TenantScope } from '../tenancy/index.ts';

export type UploadClaim =
  | { readonly kind: 'claimed'; readonly size: number; readonly stagingKey: string }
  /** Another body was stored, or is being received. */
  | { readonly kind: 'taken' }
  /** Unknown, deleted, expired or committed. */
  | { readonly kind: 'missing' };

const OPEN = sql`status = 'pending' and deleted_at is null and expires_at > now()`;

export async function claimUpload(db: Db, scope: TenantScope, id: string): Promise<UploadClaim> {
  const row = await db.oneOrNone<{ size: string; staging_key: string }>(compile(sql`
    update svc_media set upload_state = 'receiving'
     where id = ${sql.value(id, 'text')} and ${scope.predicate(null)} and ${OPEN} and upload_state is null
     returning size, staging_key`, { scope }));
  if (row) return { kind: 'claimed', size: Number(row.size), stagingKey: row.staging_key };
  const open = await db.oneOrNone(compile(sql`
    select 1 from svc_media where id = ${sql.value(id, 'text')} and ${scope.predicate(null)} and ${OPEN}`, { scope }));
  return { kind: open ? 'taken' : 'missing' };
}

/** The body is stored: the URL takes no other. */
export async function keepUpload(db: Db, scope: TenantScope, id: string): Promise<void> {
  await db.none(compile(sql`
    update svc_media set upload_state = 'received'
     where id = ${sql.value(id, 'text')} and ${scope.predicate(null)} and upload_state = 'receiving'`, { scope }));
}

/** The body failed and nothing was stored: the URL may be used again. */
export async function releaseUpload(db: Db, scope: TenantScope, id: string): Promise<void> {
  await db.none(compile(sql`
    update svc_media set upload_state = null
     where id = ${sql.value(id, 'text')} and ${scope.predicate(null)} and upload_state = 'receiving' and status = 'pending'`, { scope }));
}
