/** Shared by the workflow tests: REST calls, a run watched over its realtime channel, and local http receivers. */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { RtClient } from '../realtime/client.ts';
import { REPO_ROOT } from '../helpers/service.ts';
import { call as rest, type Reply } from '../jobs/helpers.ts';

export const FLOW = `${REPO_ROOT}/test/workflows/fixtures/flow/schema.ts`;
export const FLOW_V2 = `${REPO_ROOT}/test/workflows/fixtures/flow-v2/schema.ts`;
export const TICKER = `${REPO_ROOT}/test/workflows/fixtures/ticker/schema.ts`;

export type { Reply } from '../jobs/helpers.ts';

/** A REST call with an optional bearer token (the jobs tests' `call`, token first). */
export function call(base: string, method: string, path: string, token: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return rest(base, method, path, { body, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
}

export async function gql(base: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<any> {
  const { body } = await call(base, 'POST', '/graphql', token, { query, variables });
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

export const run = (base: string, token: string, id: string) => call(base, 'GET', `/workflows/runs/${id}`, token).then((r) => r.body);

export const finished = (r: any) => r.status === 'succeeded' || r.status === 'failed';

/**
 * Waits until the run satisfies `until`, woken by its `workflow:{id}` frames
 * (the run is read again after each), with a deadline.
 */
export async function watchRun(base: string, token: string, id: string, until: (r: any) => boolean = finished, timeoutMs = 20_000): Promise<any> {
  const rt = await RtClient.connect(base, token);
  try {
    await rt.subscribe(`workflow:${id}`);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = await run(base, token, id);
      if (until(current)) return current;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`run ${id} did not get there in time: ${JSON.stringify(current)}`);
      await rt.next((f) => f.op === 'message' && f.channel === `workflow:${id}`, left).catch(() => undefined);
    }
  } finally {
    rt.ws.close();
  }
}

export interface Received {
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: any;
}

export interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * A local http receiver on a fixed port (the fixture's http steps name it); `respond` decides each answer:
 * at once, never ('hang'), or when its promise settles.
 */
export async function receiver(port: number, respond: (r: Received, n: number) => Answer | 'hang' | Promise<Answer>): Promise<{ received: Received[]; close(): Promise<void>; arrived(): Promise<Received> }> {
  const received: Received[] = [];
  const waiters: Array<(r: Received) => void> = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => (raw += chunk));
    req.on('end', () => {
      const entry = { path: req.url ?? '', headers: req.headers, body: raw ? JSON.parse(raw) : null };
      received.push(entry);
      waiters.splice(0).forEach((wake) => wake(entry));
      const answer = respond(entry, received.length);
      if (answer === 'hang') return;
      void Promise.resolve(answer).then((settled) => {
        res.writeHead(settled.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(settled.body));
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    received,
    arrived: () => new Promise((resolve) => waiters.push(resolve)),
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
