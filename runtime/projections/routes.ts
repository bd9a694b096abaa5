/** GET /projections (with each built-in projection's status) and POST /projections/rebuild (Admin only). */
import type Router from '@koa/router';
import { requireRole, type Authenticator } from '../auth/index.ts';
import type { Logger } from '../log/index.ts';
import { ProjectionError, rebuildProjections, type RebuildInput } from './rebuild.ts';
import type { ProjectionService } from './types.ts';
import { tenantOfRequest, userActor, type AuditEntryInput, type AuditLog } from '../audit/index.ts';

export function projectionRoutes(
  router: Router, auth: Authenticator, service: ProjectionService, rebuild: () => RebuildInput, log: Logger, audit: AuditLog,
): void {
  const admin = requireRole(auth, ['Admin']);
  router.get('/projections', admin, async (koa) => {
    // Beside the specification's fields: `status` ('ready' or 'building') and a build's progress (ADR 021).
    const states = await service.states();
    koa.body = {
      projections: service.list().map((p) => {
        const state = states.get(p.name);
        return { name: p.name, source_model: p.sourceModel, status: state?.status ?? 'ready', ...(state?.build ? { build: state.build } : {}) };
      }),
    };
  });
  router.post('/projections/rebuild', admin, async (koa) => {
    const entry = (result: object): AuditEntryInput => ({
      action: 'projection.rebuild', tenantId: tenantOfRequest(koa), actor: userActor(koa.state.principal),
      entityType: 'Projection', changes: { ...result }, request: audit.requestOf(koa),
    });
    try {
      const result = await rebuildProjections({ ...rebuild(), audited: (t, done) => audit.record(t, entry(done)) });
      log.info(result, 'projections rebuilt');
      koa.body = { status: 'rebuilt', count: result.projections };
    } catch (error) {
      const known = error instanceof ProjectionError;
      if (!known) log.error({ err: error }, 'projection rebuild failed; every change rolled back');
      await audit.failed(entry({ code: known ? error.code : 'PROJECTION_REBUILD_FAILED' }));
      koa.status = known ? error.status : 503;
      // Projection errors are `{code, message}`; the message never carries SQL.
      koa.body = known
        ? { code: error.code, message: error.message }
        : { code: 'PROJECTION_REBUILD_FAILED', message: 'projection rebuild failed; no projection was changed' };
    }
  });
}
