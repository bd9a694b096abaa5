/**
 * A bare WebSocket client on a TCP socket: it can stop reading (a slow
 * consumer) and never answers pings (a dead peer), which the `ws` client
 * cannot be made to do.
 */
import { connect, type Socket } from 'node:net';

export interface RawClient {
  readonly socket: Socket;
  /** Everything received so far, as latin1 text. */
  received(): string;
  sendText(text: string): void;
  waitFor(text: string, timeoutMs?: number): Promise<void>;
  ended(): Promise<void>;
}

export async function rawConnect(port: number, token: string): Promise<RawClient> {
  const socket = connect(port, '127.0.0.1');
  let buffer = '';
  let isEnded = false;
  socket.on('data', (chunk) => (buffer += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  socket.on('close', () => (isEnded = true));
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.write(`GET /realtime/ws?token=${token} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n`
    + 'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
  const until = async (done: () => boolean, timeoutMs: number, what: string) => {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`raw client: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const client: RawClient = {
    socket,
    received: () => buffer,
    // Client frames must be masked; a zero mask leaves the payload as is.
    sendText(text) {
      const payload = Buffer.from(text);
      if (payload.length > 125) throw new Error('raw client: frame too long');
      socket.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length, 0, 0, 0, 0]), payload]));
    },
    waitFor: (text, timeoutMs = 3000) => until(() => buffer.includes(text), timeoutMs, text),
    ended: () => until(() => isEnded, 5000, 'the server to close'),
  };
  await client.waitFor('101 Switching Protocols');
  return client;
}
