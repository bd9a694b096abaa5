/**
 * The app plane (user JWT): enqueue and poll.
 */
import type Router from '@koa/router';
import { principalOf, requireUser, type Authenticator } from '../../auth/index.ts';
import { notFound } from '../../http/errors.ts';
import { requireObject } from '../input.ts';
import { readScope } from '../scope.ts';
import type { EnqueueInput, JobQueue } from '../types.ts';
import { userActor, type AuditLog } from '../../audit/index.ts';

export function mountAppRoutes(router: Router, auth: Authenticator, jobs: JobQueue, audit: AuditLog): void {
  router.post('/jobs', requireUser(auth), async (koa) => {
    const principal = await principalOf(koa, auth);
    const { tenantId } = readScope(principal, koa);
    const input = requireObject(koa.request.body) as unknown as EnqueueInput;
    const { id } = await jobs.enqueue(input, {
      actorId: principal.userId, tenantId, actor: userActor(principal), request: audit.requestOf(koa),
    });
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
