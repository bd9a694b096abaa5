/**
 * The listening socket of `svc-gen dev`. It belongs to the dev process, not
 * to a service, so a rebuild never closes it: requests go to the mounted
 * service, are held while the first one starts, and switch to a rebuilt
 * service in one step once it is ready (docs/adr/007-dev-server.md). A
 * retired service finishes its in-flight requests before it is stopped.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { drainServer } from '../runtime/http/drain.ts';
import type { MountedService } from '../runtime/service/index.ts';

/** How long a retired service may take to finish its in-flight requests. */
const RETIRE_TIMEOUT_MS = 10_000;
/** When dev stops, how long in-flight requests may take before their connections are cut. */
const SHUTDOWN_GRACE_MS = 1_000;

type Held =
  | { readonly kind: 'request'; readonly request: IncomingMessage; readonly response: ServerResponse }
  | { readonly kind: 'upgrade'; readonly request: IncomingMessage; readonly socket: Duplex; readonly head: Buffer };

interface Route {
  readonly service: MountedService;
  inFlight: number;
  drained: (() => void) | null;
}

export interface DevHost {
  readonly server: Server;
  listen(port: number, host: string): Promise<number>;
  /** Sends every new request to `service`; returns the previous one, still running, for `retire`. */
  route(service: MountedService): MountedService | null;
  /** With no service mounted: answer 503 with `message` instead of holding requests. */
  unavailable(message: string): void;
  /** Waits for `service`'s in-flight requests (bounded), then stops it. */
  retire(service: MountedService): Promise<void>;
  /** Stops accepting; closes connections once their responses are sent, or after a short grace. */
  close(): Promise<void>;
}

export function createDevHost(): DevHost {
  let current: Route | null = null;
  const routes = new Map<MountedService, Route>();
  let held: Held[] = [];
  let refusal: string | null = null;
  const sockets = new Set<Socket>();

  const dispatch = (item: Held) => {
    // A client that gave up while its request was held: its response has closed and will not close again.
    if (item.kind === 'request' ? item.response.closed : item.socket.destroyed) return;
    const route = current;
    if (!route) {
      if (refusal === null) held.push(item);
      else if (item.kind === 'request') unavailableResponse(item.response, refusal);
      else item.socket.end('HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n');
      return;
    }
    if (item.kind === 'upgrade') return route.service.upgrade(item.request, item.socket, item.head);
    route.inFlight += 1;
    item.response.once('close', () => {
      route.inFlight -= 1;
      if (route.inFlight === 0) route.drained?.();
    });
    route.service.request(item.request, item.response);
  };

  const server = createServer({ keepAliveTimeout: 65_000 });
  server.on('request', (request, response) => dispatch({ kind: 'request', request, response }));
  server.on('upgrade', (request, socket, head) => dispatch({ kind: 'upgrade', request, socket, head }));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  return {
    server,
    listen: (port, host) => new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        const address = server.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    }),
    route(service) {
      const previous = current?.service ?? null;
      current = { service, inFlight: 0, drained: null };
      routes.set(service, current);
      refusal = null;
      const waiting = held;
      held = [];
      for (const item of waiting) dispatch(item);
      return previous;
    },
    unavailable(message) {
      refusal = message;
      const waiting = held;
      held = [];
      for (const item of waiting) dispatch(item);
    },
    async retire(service) {
      const route = routes.get(service);
      routes.delete(service);
      if (route && route === current) current = null;
      if (route && route.inFlight > 0) {
        await new Promise<void>((done) => {
          const timer = setTimeout(done, RETIRE_TIMEOUT_MS);
          route.drained = () => {
            clearTimeout(timer);
            done();
          };
        });
      }
      await service.stop();
    },
    async close() {
      await drainServer(server, sockets, SHUTDOWN_GRACE_MS, () => {
        for (const item of held) {
          if (item.kind === 'request') unavailableResponse(item.response, 'svc-gen dev is stopping');
          else item.socket.destroy();
        }
        held = [];
      });
    },
  };
}

function unavailableResponse(response: ServerResponse, message: string): void {
  response.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '2' });
  response.end(JSON.stringify({ error: message, code: 'UNAVAILABLE' }));
}
