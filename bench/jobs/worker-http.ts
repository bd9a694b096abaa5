/**
 * A worker's POST over keep-alive node:http, as the bench's per-job workers
 * send it (per-job-worker.ts, consumer.ts): the token in X-Worker-Token, the
 * status and the body text back.
 */
import { Agent, request } from 'node:http';

export interface WorkerHttp {
  post(path: string, body: unknown): Promise<{ status: number; text: string }>;
  /** Closes the kept-alive sockets. */
  close(): void;
}

/** `inFlight` requests at once over one agent, plus one for the lease. */
export function workerHttp(baseUrl: URL, token: string, inFlight: number): WorkerHttp {
  const agent = new Agent({ keepAlive: true, maxSockets: inFlight + 1 });
  const post: WorkerHttp['post'] = (path, body) => new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request({
      host: baseUrl.hostname, port: baseUrl.port, path, method: 'POST', agent,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'x-worker-token': token },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
  return { post, close: () => agent.destroy() };
}
