/**
 * The HTTP edge (issue 10, point 6): a client dribbling its headers or body is
 * cut off at the configured timeouts, connections above the cap are refused,
 * and trusting X-Forwarded-For is announced with a warning at start.
 */
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../runtime/log/index.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
const lines: string[] = [];

beforeAll(async () => {
  const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
  service = await startTestService({
    log: createLogger('warn', 'test', sink),
    env: { SVC_HTTP_HEADERS_TIMEOUT_MS: '500', SVC_HTTP_REQUEST_TIMEOUT_MS: '1000', SVC_HTTP_MAX_CONNECTIONS: '3' },
  });
});
afterAll(() => service?.close());

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(service.port, '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
  });
}

/** Resolves with what the server sent once it closed the socket, and how long that took. */
function closedBy(socket: Socket): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  let text = '';
  socket.on('data', (chunk) => (text += chunk));
  return new Promise((resolve) => socket.on('close', () => resolve({ text, ms: performance.now() - started })));
}

describe('HTTP edge', () => {
  it('cuts off a client that dribbles a body at SVC_HTTP_REQUEST_TIMEOUT_MS', async () => {
    const socket = await open();
    const closed = closedBy(socket);
    socket.write('POST /auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
    const dribble = setInterval(() => socket.writable && socket.write(' '), 200);
    const { text, ms } = await closed;
    clearInterval(dribble);
    expect(text).toMatch(/^HTTP\/1.1 408/);
    expect(ms).toBeLessThan(3_000);
  });

  it('cuts off a client that never finishes its headers at SVC_HTTP_HEADERS_TIMEOUT_MS', async () => {
    const socket = await open();
    const closed = closedBy(socket);
    socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
    const { text, ms } = await closed;
    expect(text).toMatch(/^HTTP\/1.1 408/);
    expect(ms).toBeLessThan(2_500);
  });

  it('refuses connections above SVC_HTTP_MAX_CONNECTIONS', async () => {
    const held = await Promise.all([open(), open(), open()]);
    const extra = await open();
    const { text } = await closedBy(extra);
    expect(text).toBe('');
    for (const socket of held) socket.destroy();
    const deadline = Date.now() + 5_000;
    let health = await fetch(`${service.url}/health`).catch(() => null);
    while (health?.status !== 200 && Date.now() < deadline) health = await fetch(`${service.url}/health`).catch(() => null);
    expect(health?.status).toBe(200);
  });

  it('warns at start that SVC_TRUST_X_FORWARDED_FOR needs a proxy that overwrites the header', () => {
    expect(lines.join('')).toMatch(/SVC_TRUST_X_FORWARDED_FOR is on.*proxy that overwrites/);
  });
});
