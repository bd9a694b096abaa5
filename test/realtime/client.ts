/** A test client for /realtime/ws: real WebSocket, with an inbox to await frames from. */
import WebSocket from 'ws';

export type Frame = Record<string, any>;

interface Received {
  readonly frame: Frame;
  readonly raw: string;
  consumed: boolean;
}

export function realtimeUrl(baseUrl: string, token: string, query: Record<string, string> = {}): string {
  const url = new URL('/realtime/ws', baseUrl.replace(/^http/, 'ws'));
  url.searchParams.set('token', token);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return url.toString();
}

export class RtClient {
  private readonly inbox: Received[] = [];
  private waiters: Array<() => void> = [];
  closed: { code: number; reason: string } | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const raw = data.toString();
      this.inbox.push({ frame: JSON.parse(raw), raw, consumed: false });
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  static connect(baseUrl: string, token: string, query?: Record<string, string>): Promise<RtClient> {
    const ws = new WebSocket(realtimeUrl(baseUrl, token, query));
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new RtClient(ws)));
      ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.once('error', reject);
    });
  }

  send(frame: Frame | string): void {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /** Subscribes and waits for the acknowledgement. */
  async subscribe(channel: string): Promise<void> {
    this.send({ op: 'subscribe', channel });
    await this.next((f) => f.op === 'subscribed' && f.channel === channel);
  }

  /** The first not yet consumed frame matching `match`, waiting up to `timeoutMs`. */
  async next(match: (f: Frame) => boolean = () => true, timeoutMs = 3000): Promise<Frame> {
    return (await this.nextRaw(match, timeoutMs)).frame;
  }

  async nextRaw(match: (f: Frame) => boolean = () => true, timeoutMs = 3000): Promise<Received> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.inbox.find((r) => !r.consumed && match(r.frame));
      if (hit) {
        hit.consumed = true;
        return hit;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no matching frame within ${timeoutMs} ms; inbox: ${this.unconsumed()}`);
      await new Promise<void>((wake) => {
        const timer = setTimeout(wake, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          wake();
        });
      });
    }
  }

  /** Frames matching `match` that arrive within `ms` (consumed). */
  async collect(match: (f: Frame) => boolean, ms: number): Promise<Frame[]> {
    await new Promise((r) => setTimeout(r, ms));
    const hits = this.inbox.filter((r) => !r.consumed && match(r.frame));
    for (const hit of hits) hit.consumed = true;
    return hits.map((h) => h.frame);
  }

  async waitClosed(timeoutMs = 3000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (!this.closed) throw new Error('connection still open');
    return this.closed;
  }

  close(): void {
    this.ws.close();
  }

  private unconsumed(): string {
    return this.inbox.filter((r) => !r.consumed).map((r) => r.raw).join(' ').slice(0, 500);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
