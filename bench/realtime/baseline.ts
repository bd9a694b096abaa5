/**
 * The baseline: a bare `ws` fan-out server with the same frames and nothing
 * else (no authentication, tenants, presence, database or second instance).
 * It shows what the tier's own work costs on top of raw WebSocket fan-out.
 */
import { WebSocketServer, type WebSocket } from 'ws';

const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
const subscribers = new Map<string, Set<WebSocket>>();

wss.on('connection', (ws) => {
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString()) as { op: string; channel: string; data?: unknown };
    if (frame.op === 'subscribe') {
      if (!subscribers.has(frame.channel)) subscribers.set(frame.channel, new Set());
      subscribers.get(frame.channel)!.add(ws);
      ws.send(JSON.stringify({ op: 'subscribed', channel: frame.channel }));
    } else if (frame.op === 'publish') {
      const out = Buffer.from(JSON.stringify({ op: 'message', channel: frame.channel, data: frame.data, from: 'u' }));
      for (const peer of subscribers.get(frame.channel) ?? []) if (peer !== ws) peer.send(out, { binary: false });
    }
  });
});

wss.on('listening', () => {
  const address = wss.address() as { port: number };
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}` })}\n`);
});
process.once('SIGTERM', () => wss.close(() => process.exit(0)));
