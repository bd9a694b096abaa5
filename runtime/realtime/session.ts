/**
 * One WebSocket connection: who it is, what it subscribed to, and the send
 * policy. Frames of a connection are handled one at a time, in order (a
 * `presence` right after a `subscribe` sees the subscription).
 *
 * Slow consumer policy: a send to a connection whose unsent buffer already
 * holds more than `maxBufferedBytes` is not queued; the connection is closed
 * with 4008 and dropped a second later if the close handshake is stuck behind
 * its own backlog. Other subscribers are never delayed by it.
 */
import WebSocket from 'ws';
import type { Principal } from '../auth/index.ts';
import type { TenantScope } from '../tenancy/index.ts';
import type { Logger } from '../log/index.ts';
import { FrameError, frames } from './protocol.ts';
import { SafeError } from '../http/errors.ts';

export const SLOW_CONSUMER_CLOSE = 4008;
const TERMINATE_AFTER_MS = 1_000;

export class Session {
  readonly channels = new Set<string>();
  /** Cleared by each keepalive ping, set by the pong (or any frame). */
  alive = true;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly ws: WebSocket,
    readonly principal: Principal,
    /** Kept to re-check the session when auth announces a change (never logged). */
    readonly token: string,
    /** The scope the connection acts in (resolveScope at the upgrade). */
    readonly scope: TenantScope,
    private readonly maxBufferedBytes: number,
    private readonly log: Logger,
  ) {}

  /** The scope's tenant: the key of its channels and presence. */
  get tenant(): string | null {
    return this.scope.tenantId;
  }

  get userId(): string {
    return this.principal.userId;
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** `frame` is JSON text; a Buffer lets fan-out encode a frame once for every subscriber. */
  send(frame: string | Buffer): void {
    if (!this.open) return;
    if (this.ws.bufferedAmount > this.maxBufferedBytes) return this.evict();
    this.ws.send(frame, { binary: false });
  }

  fail(error: FrameError): void {
    this.send(frames.error(error));
  }

  /** Runs `work` after every frame received before it; its failure becomes an error frame. */
  enqueue(work: () => Promise<void> | void): void {
    this.queue = this.queue.then(work).catch((error: unknown) => {
      if (error instanceof FrameError) return this.fail(error);
      if (error instanceof SafeError) return this.fail(FrameError.fromSafe(error));
      this.log.error({ err: error, userId: this.userId }, 'realtime: frame handling failed');
      this.fail(new FrameError('unavailable', 'realtime service temporarily unavailable'));
    });
  }

  private evict(): void {
    this.log.warn({ userId: this.userId, buffered: this.ws.bufferedAmount }, 'realtime: closing slow consumer');
    this.ws.close(SLOW_CONSUMER_CLOSE, 'slow consumer');
    setTimeout(() => this.ws.terminate(), TERMINATE_AFTER_MS).unref();
  }
}
