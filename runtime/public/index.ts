/**
 * GET /public/records/{model}: anonymous, read-only, allowlisted models only.
 * Reads the built-in projection table (text values, the fields approved by
 * the schema's `publicRead`) of the null tenant. Any model that is not
 * reachable answers exactly like an unknown one: 404 `{error:'not found'}`.
 * No other method is routed here (405 from the router), and the rate limiter
 * applies as to any path.
 */
import { defineCapability, type ServiceContext } from '../core/index.ts';
import { notFound } from '../http/errors.ts';
import { untimed } from '../db/index.ts';
import { PROJECTIONS_LOCK_KEY } from '../projections/rebuild.ts';
import { planPublicModel, type PublicModel } from './plan.ts';
import { clampLimit, filtersOf, publicQuery } from './query.ts';
import { compile, sql } from '../sql/index.ts';
import { pgIdentifier } from '../projections/names.ts';

export { clampLimit } from './query.ts';

export const publicRead = defineCapability({
  provides: [],
  requires: ['projections'],
  name: 'public',
  async init(ctx) {
    const models = planModels(ctx);
    await indexFilterColumns(ctx, [...models.values()]);
    const hint = notListedHint(ctx);
    ctx.router.get('/public/records/:model', async (koa) => {
      const model = models.get(koa.params.model ?? '');
      if (!model) {
        hint(koa.params.model ?? '');
        throw notFound();
      }
      await ctx.services.projections.assertReady(model.model); // a projection being built answers 503, not partial rows
      const query = publicQuery(model, filtersOf(model, koa.query), clampLimit(koa.query.limit));
      koa.body = { items: await ctx.readDb.manyOrNone(query) };
    });
  },
});

/**
 * In development, a 404 for a model whose schema declares publicRead but that
 * SVC_PUBLIC_READ_MODELS does not list says why (once per model); the
 * response stays the specification's 404, so nothing leaks to the client.
 */
function notListedHint(ctx: ServiceContext<never>): (name: string) => void {
  const declared = new Set(ctx.ir.models.filter((m) => m.publicRead && !ctx.config.publicRead.models.has(m.name)).map((m) => m.name));
  if (ctx.config.env === 'production') declared.clear();
  return (name) => {
    if (!declared.delete(name)) return;
    const listed = [...ctx.config.publicRead.models, name].join(',');
    ctx.log.info({ model: name },
      `GET /public/records/${name} answered 404: the schema declares publicRead for ${name}, but SVC_PUBLIC_READ_MODELS does not list it; `
      + `start with SVC_PUBLIC_READ_MODELS=${listed} to serve it (this hint appears in development only)`);
  };
}

function planModels(ctx: ServiceContext<'projections'>): Map<string, PublicModel> {
  const config = ctx.config.publicRead;
  const known = new Set(ctx.ir.models.map((m) => m.name));
  const unknown = [...config.models].filter((name) => !known.has(name));
  if (unknown.length > 0) ctx.log.warn({ models: unknown }, 'SVC_PUBLIC_READ_MODELS names models the schema does not have');
  const out = new Map<string, PublicModel>();
  for (const model of ctx.ir.models) {
    if (!model.publicRead || !config.models.has(model.name)) continue;
    const projection = ctx.services.projections.tableOf(model.name);
    if (projection) out.set(model.name, planPublicModel(model, projection, config));
  }
  const undeclared = [...config.models].filter((name) => known.has(name) && !out.has(name));
  if (undeclared.length > 0) ctx.log.warn({ models: undeclared }, 'allowlisted models without publicRead in the schema stay private');
  return out;
}

/** Filter columns get an index on the projection table, so a filtered read stays an index scan. */
async function indexFilterColumns(ctx: ServiceContext<never>, models: PublicModel[]): Promise<void> {
  const wanted = models.flatMap((m) => [...new Set([...m.filters.values(), ...m.fixed.keys()])]
    .filter((column) => column !== 'id')
    .map((column) => ({ table: m.projection.table, column })));
  if (wanted.length === 0) return;
  await ctx.db.tx('svc-public-indexes', async (t) => {
    await untimed(t); // index builds
    await t.any(compile(sql`select pg_advisory_xact_lock(${sql.value(PROJECTIONS_LOCK_KEY, 'bigint')})`));
    for (const { table, column } of wanted) {
      const name = pgIdentifier(`${table}_${column}_public_idx`);
      await t.none(compile(sql`create index if not exists ${sql.ident(name)} on ${sql.ident(table)} (${sql.ident(column)}, "id")`));
    }
  });
}
