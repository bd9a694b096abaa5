/**
 * The load: N subscribers on one channel spread over the given servers, one
 * publisher on the first, R messages a second for S seconds. Latency is
 * measured in this process (publisher and subscribers share its clock).
 */
import WebSocket from 'ws';

export interface LoadOptions {
  readonly urls: readonly string[];
  readonly subscribers: number;
  readonly users: number;
  readonly rate: number;
  readonly seconds: number;
  readonly token: (userId: string) => Promise<string>;
}

export interface LoadResult {
  readonly expected: number;
  readonly delivered: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Connecting and subscribing everyone, until the join announcements were over. */
  readonly connectMs: number;
}

const CHANNEL = 'bench:room';
const MESSAGE_PREFIX = '{"op":"message"';

async function open(url: string, token: string): Promise<WebSocket> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/realtime/ws?token=${token}`);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return ws;
}

function subscribe(ws: WebSocket): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (data: Buffer) => {
      if (!data.toString().startsWith('{"op":"subscribed"')) return;
      ws.off('message', onMessage);
      resolve();
    };
    ws.on('message', onMessage);
    ws.send(JSON.stringify({ op: 'subscribe', channel: CHANNEL }));
  });
}

/** Waits until the subscribers have heard nothing for `quietMs` (the join announcements are over). */
async function settle(lastFrame: () => number, quietMs = 500): Promise<void> {
  while (performance.now() - lastFrame() < quietMs) await new Promise((r) => setTimeout(r, 100));
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let last = performance.now();
  const sockets: WebSocket[] = [];
  const t0 = performance.now();
  for (let i = 0; i < options.subscribers; i += 50) {
    const batch = Array.from({ length: Math.min(50, options.subscribers - i) }, async (_, j) => {
      const n = i + j;
      const ws = await open(options.urls[n % options.urls.length], await options.token(`sub-${n % options.users}`));
      await subscribe(ws);
      ws.on('message', (data: Buffer) => {
        last = performance.now();
        const text = data.toString();
        if (!text.startsWith(MESSAGE_PREFIX)) return; // join/leave announcements
        latencies.push(performance.now() - (JSON.parse(text).data.t as number));
      });
      sockets.push(ws);
    });
    await Promise.all(batch);
  }
  await settle(() => last);
  const connectMs = performance.now() - t0;
  const publisher = await open(options.urls[0], await options.token('publisher'));
  const total = options.rate * options.seconds;
  const started = performance.now();
  for (let seq = 0; seq < total; seq++) {
    const due = started + (seq * 1000) / options.rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    publisher.send(JSON.stringify({ op: 'publish', channel: CHANNEL, data: { t: performance.now(), seq } }));
  }
  await settle(() => last, 1000);
  const elapsed = (performance.now() - started - 1000) / 1000;
  for (const ws of [...sockets, publisher]) ws.terminate();
  return { ...summarize(latencies, total * options.subscribers, elapsed), connectMs };
}

function summarize(latencies: number[], expected: number, seconds: number): Omit<LoadResult, 'connectMs'> {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return {
    expected,
    delivered: sorted.length,
    perSecond: sorted.length / seconds,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted[sorted.length - 1] ?? NaN,
  };
}
