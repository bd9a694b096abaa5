/**
 * The app plane (user JWT): enqueue and poll.
 */
import type Router from '@koa/router';
import { principalOf, requireUser, resolveTenant, type Authenticator } from '../../auth/index.ts';
import { notFound } from '../../http/errors.ts';
import { requireObject } from '../input.ts';
import { readScope } from '../scope.ts';
import type { EnqueueInput, JobQueue } from '../types.ts';

export function mountAppRoutes(router: Router, auth: Authenticator, jobs: JobQueue): void {
  router.post('/jobs', requireUser(auth), async (koa) => {
    const principal = await principalOf(koa, auth);
    const tenantId = resolveTenant(principal, koa.get('x-tenant-id'));
    const input = requireObject(koa.request.body) as unknown as EnqueueInput;
    const { id } = await jobs.enqueue(input, { actorId: principal.userId, tenantId });
    koa.status = 201;
    koa.body = { id };
  });

  router.get('/jobs/:id', requireUser(auth), async (koa) => {
    const principal = await principalOf(koa, auth);
    const job = await jobs.get(koa.params.id, readScope(principal, koa));
    if (!job) throw notFound('job not found');
    koa.body = job;
  });
}
