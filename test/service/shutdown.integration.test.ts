/** Graceful shutdown: stop accepting, let in-flight requests finish, then close. */
import { expect, it } from 'vitest';
import { startTestService } from '../helpers/service.ts';

it('drains an in-flight request and refuses new connections once stopping', async () => {
  const svc = await startTestService();
  svc.ctx.router.get('/test/slow', async (koa) => {
    await new Promise((r) => setTimeout(r, 600));
    koa.body = { done: true };
  });
  const inFlight = fetch(`${svc.url}/test/slow`);
  await new Promise((r) => setTimeout(r, 100));
  const stopping = svc.close();
  await new Promise((r) => setTimeout(r, 50));
  await expect(fetch(`${svc.url}/health`, { headers: { connection: 'close' } })).rejects.toThrow();
  const response = await inFlight;
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ done: true });
  await stopping;
});
