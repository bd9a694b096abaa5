/** Graceful shutdown: stop accepting, let in-flight requests finish, then close. */
import { expect, it } from 'vitest';
import { startTestService } from '../helpers/service.ts';

it('drains an in-flight request and refuses new connections once stopping', async () => {
  const svc = await startTestService();
  // The request is in its handler until the test releases it.
  let entered!: () => void;
  let release!: () => void;
  const handling = new Promise<void>((r) => (entered = r));
  const released = new Promise<void>((r) => (release = r));
  svc.ctx.router.get('/test/slow', async (koa) => {
    entered();
    await released;
    koa.body = { done: true };
  });
  const inFlight = fetch(`${svc.url}/test/slow`);
  await handling;
  const stopping = svc.close();
  while (svc.ctx.server.listening) await new Promise((r) => setImmediate(r));
  await expect(fetch(`${svc.url}/health`, { headers: { connection: 'close' } })).rejects.toThrow();
  release();
  const response = await inFlight;
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ done: true });
  await stopping;
});
