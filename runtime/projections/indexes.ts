/**
 * Indexes of projection tables made after start: the `(tenant_id, id)` index
 * a read of one scope walks (ADR 021), and any index another capability asks
 * for before the instance listens (the public read's filter columns). A new
 * table gets its tenant index with the table (tables.ts); everything else is
 * built in the background once the instance listens, `concurrently` (writes
 * go on), on a session of its own with no statement time limit, by one
 * instance at a time: a session advisory lock on the direct connection, taken
 * with `try` (another instance's build in progress looks INVALID and must not
 * be dropped; an instance that finds the lock taken skips, the holder builds).
 * A build left INVALID by a crash is dropped and made again; `stop` cancels a
 * build in flight (the next start makes it). Reads never depend on these
 * indexes: without one a read is slower, not wrong.
 *
 * No start-time transaction issues DDL on a table such a build may be
 * indexing without taking the same lock with `try` first
 * (`indexBuildRunning`): a `create index concurrently` waits for every
 * transaction older than it, and such a transaction waiting in turn for a
 * lock on the table would be a deadlock.
 */
import type { Db, Tx } from '../db/index.ts';
import { LOCK_KEYS } from '../db/locks.ts';
import type { Logger } from '../log/index.ts';
import { compile, sql, type Sql } from '../sql/index.ts';
import { pgIdentifier } from './names.ts';
import type { ProjectionIndex, TableProjection } from './types.ts';

export function tenantIndexName(p: TableProjection): string {
  return pgIdentifier(`${p.table}_tenant_idx`);
}

export function tenantIndex(p: TableProjection): ProjectionIndex {
  return { name: tenantIndexName(p), table: p.table, columns: ['tenant_id', 'id'] };
}

export function indexSql(index: ProjectionIndex, concurrently: boolean): Sql {
  return sql`create index ${concurrently ? sql`concurrently ` : sql.empty}if not exists ${sql.ident(index.name)}
    on ${sql.ident(index.table)} (${sql.join(index.columns.map((c) => sql.ident(c)), ', ')})`;
}

/**
 * True when another session holds the build lock (an index build is running).
 * When false, this transaction holds it until it ends, so no build starts
 * while its DDL runs.
 */
export async function indexBuildRunning(t: Tx): Promise<boolean> {
  const { mine } = await t.one<{ mine: boolean }>(compile(sql`
    select pg_try_advisory_xact_lock(${sql.value(LOCK_KEYS.projectionIndexes, 'bigint')}) as mine`));
  return !mine;
}

export interface IndexBuilds {
  readonly done: Promise<void>;
  stop(): Promise<void>;
}

/** Starts building the missing or INVALID indexes of `wanted` in the background; resolves at once. */
export function buildIndexes(db: Db, wanted: readonly ProjectionIndex[], log: Logger): IndexBuilds {
  let backend: number | null = null;
  let stopped = false;
  const done = (async () => {
    const indexes = [...new Map(wanted.map((index) => [index.name, index])).values()];
    const present = await existing(db, indexes.map((index) => index.name));
    if (indexes.every((index) => present.get(index.name) === true)) return;
    await db.task('svc-projections-indexes', async (t) => {
      // One instance builds (another one's build in progress looks INVALID, and must not be dropped); the others skip.
      const claim = await t.one<{ pid: number; mine: boolean }>(compile(sql`
        select pg_backend_pid() as pid, pg_try_advisory_lock(${sql.value(LOCK_KEYS.projectionIndexes, 'bigint')}) as mine`));
      if (!claim.mine) return;
      backend = claim.pid;
      try {
        await t.none(compile(sql`set statement_timeout = 0`));
        // Read again under the lock: a build that ended meanwhile made some of them.
        const now = await existing(t, indexes.map((index) => index.name));
        for (const index of indexes) {
          if (stopped) return;
          if (now.get(index.name) === true) continue;
          const started = performance.now();
          if (now.has(index.name)) await t.none(sql.text(sql`drop index concurrently if exists ${sql.ident(index.name)}`));
          await t.none(sql.text(indexSql(index, true)));
          log.info({ table: index.table, index: index.name, ms: Math.round(performance.now() - started) }, 'projection index built');
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

/** The indexes of these names in the current schema: name -> valid. */
async function existing(t: Db | Tx, names: readonly string[]): Promise<Map<string, boolean>> {
  const rows = await t.manyOrNone<{ name: string; valid: boolean }>(compile(sql`
    select c.relname as name, i.indisvalid as valid from pg_index i join pg_class c on c.oid = i.indexrelid
     where c.relnamespace = current_schema()::regnamespace and c.relname = any(${sql.value(names, 'text[]')})`));
  return new Map(rows.map((row) => [row.name, row.valid]));
}
