/** GET /projections and POST /projections/rebuild (Admin only). */
import type Router from '@koa/router';
import { requireRole, type Authenticator } from '../auth/index.ts';
import type { Logger } from '../log/index.ts';
import { ProjectionError, rebuildProjections, type RebuildInput } from './rebuild.ts';
import type { ProjectionService } from './types.ts';

export function projectionRoutes(
  router: Router, auth: Authenticator, service: ProjectionService, rebuild: () => RebuildInput, log: Logger,
): void {
  const admin = requireRole(auth, ['Admin']);
  router.get('/projections', admin, (koa) => {
    koa.body = { projections: service.list().map((p) => ({ name: p.name, source_model: p.sourceModel })) };
  });
  router.post('/projections/rebuild', admin, async (koa) => {
    try {
      const result = await rebuildProjections(rebuild());
      log.info(result, 'projections rebuilt');
      koa.body = { status: 'rebuilt', count: result.projections };
    } catch (error) {
      const known = error instanceof ProjectionError;
      if (!known) log.error({ err: error }, 'projection rebuild failed; every change rolled back');
      koa.status = known ? error.status : 503;
      // Projection errors are `{code, message}`; the message never carries SQL.
      koa.body = known
        ? { code: error.code, message: error.message }
        : { code: 'PROJECTION_REBUILD_FAILED', message: 'projection rebuild failed; no projection was changed' };
    }
  });
}
