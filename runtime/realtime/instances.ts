/**
 * GET /meta/instances: the service's instances as the realtime tier's
 * registry holds them (svc_realtime_instances: each instance registers at
 * start and heartbeats every `heartbeatMs`; presence.ts). For each: its id,
 * host and process id, when it started, its last heartbeat, the newest schema
 * migration of its build (what the migration runner's contract gate reads,
 * runtime/db/migrate/gate.ts), and whether it is stale: silent for longer
 * than its TTL, so taken for dead and about to be reaped by the next
 * heartbeat of any instance. Staleness and ages use the database clock, as
 * the registry does, so instance clocks may drift.
 *
 * Admin of the global scope only: the instances belong to the platform, not
 * to a tenant, so a tenant's Admin (and the operator acting in a tenant
 * through X-Tenant-ID) gets 403, and a tenant-bound user naming another
 * tenant gets the resolver's 403 as on every route. Read-only: not audited.
 */
import type Router from '@koa/router';
import { principalOf, requireRole, type Authenticator } from '../auth/index.ts';
import type { Db } from '../db/index.ts';
import { forbidden } from '../http/errors.ts';
import type { PathsContribution } from '../openapi/index.ts';
import { bearer, errors, int, obj, op, str, strOrNull, timestamp } from '../openapi/paths.ts';
import { compile, sql } from '../sql/index.ts';
import { requestScope } from '../tenancy/index.ts';

export const INSTANCES_PATH = '/meta/instances';

/** Without a TTL of its own (a build before ttl_ms existed), an instance is live this long after its last heartbeat (as gate.ts). */
const DEFAULT_TTL_MS = 30_000;
/** More rows than any deployment has instances; a bound all the same. */
const MAX_INSTANCES = 500;

interface Row {
  instance_id: string; host: string | null; pid: number | null; started_at: string; seen_at: string;
  seconds_since_heartbeat: number; schema_migration: string | null; ttl_ms: number; stale: boolean;
}

export interface InstancesDeps {
  readonly db: Db;
  readonly auth: Authenticator;
  /** The answering instance's id in the registry. */
  readonly self: string;
  /** The newest schema migration of this build (null: the schema has none). */
  readonly schemaMigration: string | null;
}

export function mountInstancesRoute(router: Router, deps: InstancesDeps): void {
  router.get(INSTANCES_PATH, requireRole(deps.auth, ['Admin']), async (koa) => {
    const principal = await principalOf(koa, deps.auth);
    if (!requestScope(koa, principal).isGlobal) throw forbidden('the instances belong to the platform: only an Admin of the global scope lists them');
    const rows = await deps.db.manyOrNone<Row>(compile(sql`
      select instance_id, host, pid, started_at, seen_at,
             round(extract(epoch from now() - seen_at)::numeric, 3)::float8 as seconds_since_heartbeat,
             schema_migration, coalesce(ttl_ms, ${sql.value(DEFAULT_TTL_MS, 'int')}) as ttl_ms,
             seen_at < now() - coalesce(ttl_ms, ${sql.value(DEFAULT_TTL_MS, 'int')}) * interval '1 millisecond' as stale
        from svc_realtime_instances
       order by started_at, instance_id
       limit ${sql.value(MAX_INSTANCES, 'int')}`));
    const newest = deps.schemaMigration;
    koa.set('Cache-Control', 'no-store');
    koa.body = {
      self: deps.self,
      schemaMigration: newest,
      instances: rows.map((row) => ({
        id: row.instance_id,
        host: row.host,
        pid: row.pid,
        startedAt: row.started_at,
        lastHeartbeatAt: row.seen_at,
        secondsSinceHeartbeat: row.seconds_since_heartbeat,
        schemaMigration: row.schema_migration,
        // As the contract gate counts it: a build that registered no schema migration is older.
        olderSchema: newest !== null && (row.schema_migration === null || row.schema_migration < newest),
        ttlMs: row.ttl_ms,
        stale: row.stale,
        self: row.instance_id === deps.self,
      })),
    };
  });
}

const INSTANCE = obj({
  id: str, host: strOrNull, pid: { type: ['integer', 'null'] }, startedAt: timestamp, lastHeartbeatAt: timestamp,
  secondsSinceHeartbeat: { type: 'number' }, schemaMigration: strOrNull, olderSchema: { type: 'boolean' }, ttlMs: int,
  stale: { type: 'boolean' }, self: { type: 'boolean' },
});

export const INSTANCES_PATHS: PathsContribution = {
  [INSTANCES_PATH]: { get: op({
    summary: 'The service\'s registered instances: host, start, last heartbeat, schema migration, staleness (Admin of the global scope)',
    tags: ['meta'], security: bearer,
    description: 'From the realtime tier\'s registry. `stale`: silent for longer than `ttlMs` (reaped by the next heartbeat of any instance). '
      + '`olderSchema`: its build\'s newest schema migration is older than this instance\'s (it holds back a contract migration). '
      + 'A tenant\'s Admin, or the operator acting in a tenant (X-Tenant-ID), gets 403: instances belong to no tenant.',
    responses: {
      200: { description: 'the instances, oldest first', schema: obj({ self: str, schemaMigration: strOrNull, instances: { type: 'array', items: INSTANCE } }) },
      ...errors(401, 403),
    },
  }) },
};
