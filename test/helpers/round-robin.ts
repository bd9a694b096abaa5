/**
 * A tiny loopback load balancer: each HTTP request, and each WebSocket
 * upgrade, goes to the next backend in turn (round robin), as a reverse proxy
 * without sticky sessions would send them. X-Forwarded-For carries the client.
 */
import { createServer, request, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface RoundRobin {
  readonly url: string;
  /** Requests and upgrades sent to each backend, by backend URL. */
  readonly served: Map<string, number>;
  close(): Promise<void>;
}

export async function startRoundRobin(backends: readonly string[]): Promise<RoundRobin> {
  const targets = backends.map((backend) => new URL(backend));
  const served = new Map(backends.map((backend) => [backend, 0]));
  let next = 0;
  const pick = () => {
    const index = next++ % targets.length;
    served.set(backends[index], (served.get(backends[index]) ?? 0) + 1);
    return targets[index];
  };
  const sockets = new Set<Socket>();

  const server: Server = createServer((req, res) => {
    const target = pick();
    const forwarded = [req.headers['x-forwarded-for'], req.socket.remoteAddress].filter(Boolean).join(', ');
    const upstream = request({
      host: target.hostname, port: target.port, method: req.method, path: req.url,
      headers: { ...req.headers, host: target.host, 'x-forwarded-for': forwarded },
    }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(upstream);
  });

  server.on('upgrade', (req, client: Socket, head: Buffer) => {
    const target = pick();
    const backend = connect(Number(target.port), target.hostname, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      backend.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) backend.write(head);
      backend.pipe(client);
      client.pipe(backend);
    });
    for (const socket of [client, backend]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        backend.destroy();
      });
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const port = await new Promise<number>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
