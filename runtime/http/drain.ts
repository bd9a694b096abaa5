/**
 * Closing an HTTP server without cutting requests short: no new connections,
 * idle keep-alive connections closed at once and busy ones as soon as their
 * response is sent, whatever is left destroyed after `timeoutMs`.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Resolves once every connection of `server` is closed; `meanwhile` runs while they drain. */
export async function drainServer(server: Server, sockets: ReadonlySet<Socket>, timeoutMs: number, meanwhile?: () => unknown): Promise<void> {
  const closed = new Promise<void>((done) => server.close(() => done()));
  // A keep-alive connection turns idle when its in-flight response is sent: close it then.
  const idle = setInterval(() => server.closeIdleConnections(), 50);
  server.closeIdleConnections();
  const timer = setTimeout(() => {
    for (const socket of sockets) socket.destroy();
  }, timeoutMs);
  try {
    await meanwhile?.();
    await closed;
  } finally {
    clearInterval(idle);
    clearTimeout(timer);
  }
}
