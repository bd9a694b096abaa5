/**
 * The projections capability: one built-in current-state table per entity
 * model (`<table>_projection`, every column text), custom projections from
 * the ServiceDefinition, live refresh by a durable consumer, a build at start
 * only for a projection that is new or whose definition changed (in the
 * background when it is big: ADR 021), and the admin routes. Provides
 * `ctx.services.projections`.
 */
import { fileURLToPath } from 'node:url';
import { defineCapability, type ServiceContext } from '../core/index.ts';
import { preparesStatements, untimed } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import { planProjections, readCatalog } from './plan.ts';
import { projectionTableName } from './names.ts';
import { Builder, planBuilds } from './build.ts';
import { buildIndexes, tenantIndex, type IndexBuilds } from './indexes.ts';
import { readiness } from './readiness.ts';
import { PROJECTIONS_LOCK_KEY } from './rebuild.ts';
import { Refresher, TABLES_CONSUMER } from './refresher.ts';
import { projectionRoutes } from './routes.ts';
import { ensureTables, IndexBuildRunningError } from './tables.ts';
import type { ProjectionDefinition, ProjectionIndex, ProjectionInfo, ProjectionService, TableProjection } from './types.ts';

export { defineProjection } from './types.ts';
export { ProjectionSchemaConflictError, SCHEMA_CONFLICT } from './tables.ts';
export { checkNewest } from './sync.ts';
export { TABLES_CONSUMER } from './refresher.ts';
export type {
  ProjectionDefinition, ProjectionEvent, ProjectionInput, ProjectionInfo, ProjectionService, ProjectionState, RefreshStats,
  TableProjection, ProjectedColumn, ProjectionIndex,
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
    const { tables, pending } = await prepare(ctx);
    const byModel = new Map(tables.map((p) => [p.model, p]));
    const refresher = new Refresher(byModel, ctx.projections, preparesStatements(ctx));
    // Consumers start before a build: a change committed during it is refreshed after the batch that holds its row.
    await refresher.start(ctx.services.feed);
    const ready = readiness(ctx.db, tables);
    const builder = new Builder(ctx.db, ctx.log, ctx.config.projections.buildBatch, ready.markReady);
    await builder.start(pending);
    // The tenant index of every table keyed by id alone (layout 2; the key is that index in layout 3),
    // and what later capabilities ask for (wantIndex) before the instance listens.
    const wanted: ProjectionIndex[] = tables.filter((p) => !p.keyedByTenant).map(tenantIndex);
    const indexes = afterListening(ctx, () => buildIndexes(ctx.directDb, wanted, ctx.log));
    const infos = describe(tables, ctx.projections);
    ctx.services.projections = {
      list: () => infos, tableOf: (model) => byModel.get(model), stats: () => refresher.stats(),
      states: ready.states, assertReady: ready.assertReady, wantIndex: (index) => void wanted.push(index),
    };
    projectionRoutes(ctx.router, ctx.services.auth, ctx.services.projections, () => ({
      db: ctx.db, history: ctx.services.events.policy, tables, customs: ctx.projections,
    }), ctx.log, ctx.services.audit);
    return {
      async stop() {
        await indexes.stop();
        await builder.stop();
        await refresher.stop();
      },
    };
  },
});

/**
 * Builds the plan, aligns the tables and decides which projections need a
 * build, under the projections lock: instances may start together. Reads
 * the catalog and the state rows only, never a projection's rows.
 */
async function prepare(ctx: ServiceContext<never>): Promise<{ tables: TableProjection[]; pending: readonly TableProjection[] }> {
  const names = ctx.ir.models.flatMap((m) => [m.table, projectionTableName(m.table)]);
  for (let waited = false; ; waited = true) {
    try {
      return await ctx.db.tx('svc-projections-prepare', async (t) => {
        await untimed(t); // DDL, and the wait for an instance that rebuilds
        await t.any(compile(sql`select pg_advisory_xact_lock(${sql.value(PROJECTIONS_LOCK_KEY, 'bigint')})`));
        const catalog = await readCatalog(t, names);
        const ensured = await ensureTables(t, planProjections(ctx.ir, catalog), catalog);
        const tables = ensured.tables;
        const reshaped = ensured.changed;
        // Without the tables consumer's cursor, no change was applied for these rows: build them all.
        const { cursor } = await t.one<{ cursor: boolean }>(compile(sql`
          select exists (select 1 from svc_feed_cursors where name = ${sql.value(TABLES_CONSUMER, 'text')}) as cursor`));
        const { pending } = await planBuilds(t, tables, { always: ctx.config.projections.sync === 'always', fresh: !cursor, reshaped });
        return { tables, pending };
      });
    } catch (err) {
      if (!(err instanceof IndexBuildRunningError)) throw err;
      // Waited for outside any transaction: a transaction of ours would be one the build waits for.
      if (!waited) ctx.log.info('projections: a column must be added while another instance builds a projection index; waiting for that build');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/**
 * Missing indexes of existing tables (the tenant index, the public read's)
 * are built once this instance listens, every capability initialised: a
 * `create index concurrently` waits for open transactions, and one of them
 * taking a lock on the table behind it would be a deadlock; the start itself
 * issues no DDL on an existing projection table but a column it adds, and that
 * only while no build runs (tables.ts). Not on the embedded database (one
 * connection, small data), nor for a schema mounted beside a running one
 * (`svc-gen dev`): reads do not depend on these indexes.
 */
function afterListening(ctx: ServiceContext<never>, build: () => IndexBuilds): { stop(): Promise<void> } {
  if (ctx.dbKind !== 'server' || ctx.server.listening) return { stop: async () => undefined };
  let running: IndexBuilds | null = null;
  const start = () => void (running = build());
  ctx.server.once('listening', start);
  return {
    async stop() {
      ctx.server.off('listening', start);
      await running?.stop();
    },
  };
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
