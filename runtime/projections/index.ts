/**
 * The projections capability: one built-in current-state table per entity
 * model (`<table>_projection`, every column text), custom projections from
 * the ServiceDefinition, startup synchronisation, live refresh, and the admin
 * routes. Provides `ctx.services.projections`.
 */
import { fileURLToPath } from 'node:url';
import { defineCapability, type ServiceContext } from '../core/index.ts';
import { preparesStatements, untimed } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import { planProjections, readCatalog } from './plan.ts';
import { projectionTableName } from './names.ts';
import { PROJECTIONS_LOCK_KEY } from './rebuild.ts';
import { Refresher } from './refresher.ts';
import { projectionRoutes } from './routes.ts';
import { syncAll } from './sync.ts';
import { ensureTables } from './tables.ts';
import type { ProjectionDefinition, ProjectionInfo, ProjectionService, TableProjection } from './types.ts';

export { defineProjection } from './types.ts';
export { ProjectionSchemaConflictError, SCHEMA_CONFLICT } from './tables.ts';
export { countDrift } from './sync.ts';
export type {
  ProjectionDefinition, ProjectionEvent, ProjectionInput, ProjectionInfo, ProjectionService, RefreshStats,
  TableProjection, ProjectedColumn,
} from './types.ts';

declare module '../core/capability.ts' {
  interface Services {
    projections: ProjectionService;
  }
}

export const projections = defineCapability({
  name: 'projections',
  provides: ['projections'],
  requires: ['feed', 'auth', 'events', 'audit'],
  migrations: fileURLToPath(new URL('./migrations/', import.meta.url)),
  async init(ctx) {
    validateCustoms(ctx);
    const tables = await prepare(ctx);
    const byModel = new Map(tables.map((p) => [p.model, p]));
    const refresher = new Refresher(byModel, ctx.projections, preparesStatements(ctx));
    // Consumers start before the synchronisation: a change committed during it is refreshed afterwards.
    await refresher.start(ctx.services.feed);
    await synchronise(ctx, tables);
    const infos = describe(tables, ctx.projections);
    ctx.services.projections = { list: () => infos, tableOf: (model) => byModel.get(model), stats: () => refresher.stats() };
    projectionRoutes(ctx.router, ctx.services.auth, ctx.services.projections, () => ({
      db: ctx.db, history: ctx.services.events.policy, tables, customs: ctx.projections,
    }), ctx.log, ctx.services.audit);
    return {
      async stop() {
        await refresher.stop();
      },
    };
  },
});

/** Builds the plan and aligns the tables, under a lock: instances may start together. */
async function prepare(ctx: ServiceContext<never>): Promise<TableProjection[]> {
  const names = ctx.ir.models.flatMap((m) => [m.table, projectionTableName(m.table)]);
  return ctx.db.tx('svc-projections-prepare', async (t) => {
    await untimed(t); // DDL, and the wait for an instance that rebuilds
    await t.any(compile(sql`select pg_advisory_xact_lock(${sql.value(PROJECTIONS_LOCK_KEY, 'bigint')})`));
    const catalog = await readCatalog(t, names);
    const tables = planProjections(ctx.ir, catalog);
    await ensureTables(t, tables, catalog);
    return tables;
  });
}

async function synchronise(ctx: ServiceContext<never>, tables: readonly TableProjection[]): Promise<void> {
  const started = performance.now();
  await ctx.db.tx('svc-projections-sync', async (t) => {
    await untimed(t); // every row of every model
    await t.any(compile(sql`select pg_advisory_xact_lock(${sql.value(PROJECTIONS_LOCK_KEY, 'bigint')})`));
    await syncAll(t, tables);
    await t.none(compile(sql`
      insert into svc_projection_state (name, last_sync_at) select n, now() from unnest(${sql.value(tables.map((p) => p.name), 'text[]')}) as n
       on conflict (name) do update set last_sync_at = now()`));
  });
  ctx.log.debug({ projections: tables.length, ms: Math.round(performance.now() - started) }, 'projections synchronised');
}

function validateCustoms(ctx: ServiceContext<never>): void {
  const names = new Set(ctx.ir.models.map((m) => projectionTableName(m.table)));
  for (const custom of ctx.projections) {
    if (!ctx.ir.models.some((m) => m.name === custom.sourceModel)) {
      throw new Error(`projection ${custom.name}: source model ${custom.sourceModel} is not a model of the schema`);
    }
    if (names.has(custom.name)) throw new Error(`projection ${custom.name}: the name is already taken`);
    names.add(custom.name);
  }
}

function describe(tables: readonly TableProjection[], customs: readonly ProjectionDefinition[]): ProjectionInfo[] {
  return [
    ...tables.map((p) => ({ name: p.name, sourceModel: p.model, kind: 'table' as const, table: p.table })),
    ...customs.map((c) => ({ name: c.name, sourceModel: c.sourceModel, kind: 'custom' as const, table: null })),
  ];
}
