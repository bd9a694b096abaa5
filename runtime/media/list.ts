/**
 * `GET /media`: the committed media of the caller's scope, newest first, a
 * keyset page on the id (the console's media view). Whoever may read one
 * upload's metadata may see it in this list: the same scope rule.
 */
import { isoUtcSql, type Db } from '../db/index.ts';
import { invalidField } from '../http/errors.ts';
import { compile, sql } from '../sql/index.ts';
import type { TenantScope } from '../tenancy/index.ts';
import type { MediaMetadata } from './store.ts';

const MAX = 200;

export function pageLimit(value: string | undefined): number {
  if (value === undefined || value === '') return 50;
  if (!/^\d+$/.test(value) || Number(value) < 1) throw invalidField('limit', `limit must be an integer from 1 to ${MAX}`);
  return Math.min(MAX, Number(value));
}

export async function listMedia(db: Db, scope: TenantScope, after: string | undefined, limit: number) {
  const rows = await db.manyOrNone(compile(sql`
    select m.id, m.filename, m.content_type, m.size, m.sha256, ${sql.raw(isoUtcSql('m.created_at'))} as created_at
      from svc_media m
     where m.status = 'committed' and m.deleted_at is null and ${scope.predicate('m')}
       ${after ? sql`and m.id < ${sql.value(after, 'text')}` : sql.empty}
     order by m.id desc limit ${sql.value(limit + 1, 'int')}`, { scope }));
  const items: Array<MediaMetadata & { url: string }> = rows.slice(0, limit).map((row) => ({
    id: row.id, filename: row.filename, contentType: row.content_type, size: Number(row.size), sha256: row.sha256,
    createdAt: row.created_at, url: `/media/${row.id}`,
  }));
  return { items, nextCursor: rows.length > limit ? items[items.length - 1].id : null };
}
