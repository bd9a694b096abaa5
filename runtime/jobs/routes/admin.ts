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

export function mountAdminRoutes(router: Router, auth: Authenticator, db: Db): void {
  const admin = requireRole(auth, ['Admin']);

  router.post('/jobs/workers', admin, async (koa) => {
    const principal = await principalOf(koa, auth);
    const body = requireObject(koa.request.body);
    const tenantId = readScope(principal, koa) ?? null;
    koa.status = 201;
    koa.body = await mintToken(db, { name: body.name, queues: body.queues }, principal.userId, tenantId);
  });

  router.get('/jobs/workers', admin, async (koa) => {
    koa.body = { workers: await listTokens(db, readScope(await principalOf(koa, auth), koa)) };
  });

  router.delete('/jobs/workers/:id', admin, async (koa) => {
    const revoked = await revokeToken(db, koa.params.id, readScope(await principalOf(koa, auth), koa));
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
