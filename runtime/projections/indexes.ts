/**
 * The index a read of one scope walks in a projection: `(tenant_id, id)`, so
 * that the public read (the global scope's rows, by id) reads as many rows
 * as it returns instead of every row of the scope (ADR 021). A new table gets
 * it with the table (tables.ts); an existing one gets it in the background
 * after start, `concurrently` (writes go on), on a session of its own with no
 * statement time limit, by one instance at a time (a session advisory lock on
 * the direct connection). A build left INVALID by a crash is dropped and made
 * again; `stop` cancels a build in flight (the next start makes it).
 */
import type { Db } from '../db/index.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import type { Logger } from '../log/index.ts';
import { compile, sql, type Sql } from '../sql/index.ts';
import { pgIdentifier } from './names.ts';
import type { TableProjection } from './types.ts';

export function tenantIndexName(p: TableProjection): string {
  return pgIdentifier(`${p.table}_tenant_idx`);
}

export function tenantIndexSql(p: TableProjection, concurrently: boolean): Sql {
  return sql`create index ${concurrently ? sql`concurrently ` : sql.empty}if not exists ${sql.ident(tenantIndexName(p))}
    on ${sql.ident(p.table)} ("tenant_id", "id")`;
}

export interface IndexBuilds {
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

/** Starts building the missing tenant indexes in the background; resolves at once. */
export function buildTenantIndexes(db: Db, tables: readonly TableProjection[], log: Logger): IndexBuilds {
  let backend: number | null = null;
  let stopped = false;
  const done = (async () => {
    const names = tables.map(tenantIndexName);
    const present = await db.manyOrNone<{ name: string; valid: boolean }>(compile(sql`
      select c.relname as name, i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
       where c.relnamespace = current_schema()::regnamespace and c.relname = any(${sql.value(names, 'text[]')})`));
    const missing = tables.filter((p) => !present.some((row) => row.name === tenantIndexName(p) && row.valid));
    if (missing.length === 0) return;
    await db.task('svc-projections-indexes', async (t) => {
      // One instance builds (another one's build in progress looks INVALID, and must not be dropped); the others skip.
      const claim = await t.one<{ pid: number; mine: boolean }>(compile(sql`
        select pg_backend_pid() as pid, pg_try_advisory_lock(${sql.value(LOCK_KEYS.projectionIndexes, 'bigint')}) as mine`));
      if (!claim.mine) return;
      backend = claim.pid;
      await t.none(compile(sql`set statement_timeout = 0`));
      try {
        for (const p of missing) {
          if (stopped) return;
          const started = performance.now();
          if (present.some((row) => row.name === tenantIndexName(p))) {
            await t.none(sql.text(sql`drop index concurrently if exists ${sql.ident(tenantIndexName(p))}`));
          }
          await t.none(sql.text(tenantIndexSql(p, true)));
          log.info({ projection: p.name, index: tenantIndexName(p), ms: Math.round(performance.now() - started) }, 'projection index built');
        }
      } finally {
        backend = null;
        await t.none(compile(sql`reset statement_timeout`));
        await t.any(compile(sql`select pg_advisory_unlock(${sql.value(LOCK_KEYS.projectionIndexes, 'bigint')})`));
      }
    });
  })().catch((err: unknown) => {
    if (!stopped) log.warn({ err }, 'projection index build failed: the next start tries again');
  });
  return {
    done,
    async stop() {
      stopped = true;
      if (backend !== null) await db.any(compile(sql`select pg_cancel_backend(${sql.value(backend, 'int')})`)).catch(() => undefined);
      await done;
    },
  };
}
