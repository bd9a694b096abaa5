/**
 * The admin plane (Admin role): worker tokens, stats, recent jobs.
 * A tenant-bound admin mints tokens for, and sees, only its own tenant.
 */
import type Router from '@koa/router';
import { principalOf, requireRole, type Authenticator } from '../../auth/index.ts';
import type { Db } from '../../db/index.ts';
import { notFound } from '../../http/errors.ts';
import { requireObject } from '../input.ts';
import { readScope } from '../scope.ts';
import { jobStats, recentJobs, type RecentQuery } from '../stats.ts';
import { listTokens, mintToken, revokeToken } from '../workers.ts';
import { userActor, type AuditLog } from '../../audit/index.ts';

export function mountAdminRoutes(router: Router, auth: Authenticator, db: Db, audit: AuditLog): void {
  const admin = requireRole(auth, ['Admin']);

  router.post('/jobs/workers', admin, async (koa) => {
    const principal = await principalOf(koa, auth);
    const body = requireObject(koa.request.body);
    const scope = readScope(principal, koa);
    koa.body = await db.tx('svc-jobs-mint', async (t) => {
      const minted = await mintToken(t, { name: body.name, queues: body.queues }, principal.userId, scope);
      await audit.record(t, {
        action: 'worker_token.create', tenantId: scope.tenantId, actor: userActor(principal), entityType: 'WorkerToken', entityId: minted.id,
        changes: { name: body.name, queues: minted.queues }, request: audit.requestOf(koa),
      });
      return minted;
    });
    koa.status = 201;
  });

  router.get('/jobs/workers', admin, async (koa) => {
    koa.body = { workers: await listTokens(db, readScope(await principalOf(koa, auth), koa)) };
  });

  router.delete('/jobs/workers/:id', admin, async (koa) => {
    const principal = await principalOf(koa, auth);
    const revoked = await db.tx('svc-jobs-revoke', async (t) => {
      const token = await revokeToken(t, koa.params.id, readScope(principal, koa));
      if (token) {
        await audit.record(t, {
          action: 'worker_token.revoke', tenantId: token.tenantId, actor: userActor(principal), entityType: 'WorkerToken',
          entityId: koa.params.id, request: audit.requestOf(koa),
        });
      }
      return token;
    });
    if (!revoked) throw notFound('worker token not found');
    koa.status = 204;
  });

  router.get('/jobs/stats', admin, async (koa) => {
    koa.body = await jobStats(db, readScope(await principalOf(koa, auth), koa));
  });

  router.get('/jobs/recent', admin, async (koa) => {
    const q = (name: string) => [koa.query[name]].flat()[0];
    const recent: RecentQuery = { queue: q('queue'), status: q('status'), limit: q('limit'), offset: q('offset') };
    koa.body = { jobs: await recentJobs(db, readScope(await principalOf(koa, auth), koa), recent) };
  });
}
