/**
 * The contract gate: a file marked `-- contract of NNNN: ...` (the contract
 * half of an expand/contract pair) applies only when no live registered
 * instance runs a build whose newest schema migration is older than it. The
 * registry is the realtime tier's `svc_realtime_instances` (every instance
 * registers there and heartbeats); `schema_migration` and `ttl_ms` are its
 * columns for this gate (runtime/realtime/migrations/0002_schema_version.sql).
 */
import type { Db, Tx } from '../types.ts';
import { compile, sql } from '../../sql/index.ts';
import type { MigrationFile } from './store.ts';

export interface Holder {
  readonly instance_id: string;
  readonly schema_migration: string | null;
  readonly started_at: string;
}

/** Without a heartbeat interval of its own, an instance is live for this long after its last one. */
const DEFAULT_TTL_MS = 30_000;

/** Live instances of builds older than `file` (an instance that registered no schema version counts as older). */
export async function contractHolders(t: Db | Tx, file: MigrationFile): Promise<Holder[]> {
  const registry = await t.one<{ ok: boolean }>(`
    select exists (select 1 from pg_attribute
                    where attrelid = to_regclass('svc_realtime_instances') and attname = 'schema_migration' and not attisdropped) as ok`);
  if (!registry.ok) return [];
  return t.manyOrNone<Holder>(compile(sql`
    select instance_id, schema_migration, started_at from svc_realtime_instances
     where seen_at > now() - coalesce(ttl_ms, ${sql.value(DEFAULT_TTL_MS, 'int')}) * interval '1 millisecond'
       and (schema_migration is null or schema_migration < ${sql.value(file.name)})
     order by started_at`));
}

export function describeHolders(file: MigrationFile, holders: readonly Holder[]): string {
  const list = holders.slice(0, 5).map((h) => `${h.instance_id} (newest migration ${h.schema_migration ?? 'unknown'}, since ${h.started_at})`);
  return `${file.scope}/${file.name} is a contract migration, held back: ${holders.length} live instance(s) still run an older schema: `
    + `${list.join(', ')}${holders.length > 5 ? ', ...' : ''}; it applies once they are gone (rerun svc-gen migrate or restart)`;
}
