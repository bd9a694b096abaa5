/**
 * A real HTTP proxy in front of the server that counts requests per path and
 * can inject transient faults (503, 429, dropped connections), to test the
 * SDK's retries and batching without touching the server.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';

export type Fault = 'pass' | '503' | '429' | 'drop';

export interface Proxy {
  readonly url: string;
  /** Requests seen per path (`POST /jobs/lease`, ...). */
  readonly counts: Map<string, number>;
  /** Decides the fate of each request; default passes everything. */
  fault: (method: string, path: string, seen: number) => Fault;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<Proxy> {
  const upstream = new URL(target);
  const counts = new Map<string, number>();
  const proxy: Proxy = { url: '', counts, fault: () => 'pass', close: async () => {} };
  const server: Server = createServer((req, res) => {
    const key = `${req.method} ${req.url}`;
    const seen = (counts.get(key) ?? 0) + 1;
    counts.set(key, seen);
    const fault = proxy.fault(req.method ?? 'GET', req.url ?? '/', seen);
    if (fault === 'drop') return void req.socket.destroy();
    if (fault === '503' || fault === '429') {
      res.writeHead(Number(fault), { 'content-type': 'application/json', ...(fault === '429' ? { 'retry-after': '0' } : {}) });
      return void res.end(JSON.stringify({ error: 'injected' }));
    }
    forward(req, upstream, (status, headers, body) => {
      res.writeHead(status, headers);
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  });
}

function forward(
  req: IncomingMessage, upstream: URL, reply: (status: number, headers: Record<string, string>, body: Buffer) => void,
) {
  const out = request({
    host: upstream.hostname, port: upstream.port, method: req.method, path: req.url,
    headers: { ...req.headers, host: upstream.host },
  }, (res) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => reply(res.statusCode ?? 502, { 'content-type': res.headers['content-type'] ?? 'application/json' }, Buffer.concat(chunks)));
  });
  out.on('error', () => reply(502, {}, Buffer.from('')));
  req.pipe(out);
}
