/**
 * http steps that could stall the engine: a header value rendered from data
 * with a line break is a step failure under the run's onFailure (never the
 * engine's retries of its own advance), and requests waiting on an endpoint
 * that does not answer hold no runner: an unrelated run still finishes at
 * once, and at most SVC_WORKFLOW_HTTP_PER_ORIGIN requests reach one origin.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, startTestService, type TestService } from '../helpers/service.ts';
import { call, finished, gql, receiver, run, watchRun, type Answer } from './helpers.ts';

const SLOWHOOKS = `${REPO_ROOT}/test/workflows/fixtures/slowhooks/schema.ts`;
const ENV = { SVC_WORKFLOW_HTTP_ALLOW: 'http://127.0.0.1:47313', SVC_WORKFLOW_HTTP_PER_ORIGIN: '4', SVC_WORKFLOW_POLL_MS: '200', RATE_LIMIT_RPS: '100000' };

let service: TestService;
let manager: string;
let admin: string;
let hooks: Awaited<ReturnType<typeof receiver>>;
let letSlowAnswer: () => void;
const slowAnswers = new Promise<void>((resolve) => (letSlowAnswer = resolve));

beforeAll(async () => {
  hooks = await receiver(47313, (r): Answer | Promise<Answer> => {
    if (r.path === '/slow') return slowAnswers.then(() => ({ status: 200, body: { n: r.body.n } }));
    return { status: 200, body: { title: r.headers['x-title'] } };
  });
  service = await startTestService({ fixture: SLOWHOOKS, env: ENV });
  manager = await service.token({ role: 'Manager', userId: 'mgr' });
  admin = await service.token({ role: 'Admin', userId: 'root' });
});
afterAll(async () => {
  letSlowAnswer();
  await service?.close();
  await hooks?.close();
});

const start = (workflow: string, input: unknown) => call(service.url, 'POST', `/workflows/${workflow}/run`, manager, { input });
const sentTo = (path: string) => hooks.received.filter((r) => r.path === path);

/** Polls `condition` every 20 ms until it holds; throws past the deadline. */
async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('a header rendered from data', () => {
  /** Creates a note; its run was started in the write's transaction and is the newest. */
  async function announced(title: string): Promise<string> {
    await gql(service.url, manager, 'mutation($d: JSON!) { create(model: "Note", data: $d) }', { d: { title } });
    const runs = await call(service.url, 'GET', '/workflows/runs?workflow=announce&limit=1', admin);
    return runs.body.items[0].id;
  }

  it('is sent when it is a valid header value', async () => {
    const done = await watchRun(service.url, admin, await announced('plain title'));
    expect(done.status).toBe('succeeded');
    expect(done.steps[0].output).toEqual({ status: 200, result: { title: 'plain title' } });
  });

  it('fails its step, naming the header, when it holds a line break; the run follows onFailure (stop) at once', async () => {
    const began = Date.now();
    const runId = await announced('line1\nline2');
    const done = await watchRun(service.url, admin, runId, finished, 10_000);
    expect(Date.now() - began).toBeLessThan(5000);
    expect(done.status).toBe('failed');
    expect(done.steps[0]).toMatchObject({ id: 'tell', status: 'failed', attempts: 1, error: 'header X-Title contains a line break: not sent' });
    expect(done.error).toBe('step tell: header X-Title contains a line break: not sent');
    expect(sentTo('/announce').some((r) => r.headers['x-title'] !== 'plain title')).toBe(false);
    // A step failure, not an engine fault: each advance of the run was leased once and completed.
    const advances = await service.ctx.db.manyOrNone(`select status, attempts from svc_jobs where queue = 'svc.workflows' and payload->>'runId' = $1`, [runId]);
    expect(advances).toEqual([{ status: 'succeeded', attempts: 1 }]);
  });
});

describe('http steps waiting on an endpoint that does not answer', () => {
  it('hold no runner: an unrelated run finishes at once; at most 4 requests per origin are in flight; all complete once it answers', async () => {
    const slow: string[] = [];
    for (let n = 0; n < 6; n += 1) slow.push((await start('slow', { n })).body.runId);
    await until(() => sentTo('/slow').length >= 4, 10_000, 'four requests in flight');

    const began = performance.now();
    const { body } = await start('quick', {});
    const quick = await watchRun(service.url, manager, body.runId, finished, 5000);
    const tookMs = performance.now() - began;
    console.log(`unrelated one-step run beside 6 stuck http steps: ${tookMs.toFixed(0)} ms`);
    expect(quick.status).toBe('succeeded');
    expect(tookMs).toBeLessThan(5000); // the stuck requests time out after 30 s; 0.4 s alone, 2.4 s on a loaded 2-core machine

    // The stuck runs are still running; the origin's bound (default 4) kept the other two waiting in the database.
    for (const id of slow) expect((await run(service.url, manager, id)).status).toBe('running');
    expect(sentTo('/slow')).toHaveLength(4);

    letSlowAnswer();
    for (const id of slow) {
      const done = await watchRun(service.url, manager, id, finished, 20_000);
      expect(done.status).toBe('succeeded');
      expect(done.steps[0]).toMatchObject({ status: 'succeeded', attempts: 1 });
    }
    expect(sentTo('/slow').map((r) => r.body.n).sort()).toEqual([0, 1, 2, 3, 4, 5]);
  });
});
