/**
 * The WebSocket endpoint: authenticates the upgrade (401 before the
 * handshake), picks the tenant, and keeps connections alive with pings.
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { bearerToken, InvalidTokenError, SESSION_CLOSE, tokenExpiresAt, type Authenticator, type Principal } from '../auth/index.ts';
import { resolveScope, type TenantScope } from '../tenancy/index.ts';
import { codeOfStatus } from '../http/errors.ts';
import type { Logger } from '../log/index.ts';
import type { UpgradeHandler } from '../core/index.ts';
import type { RealtimeConfig } from './config.ts';
import { onClose, onFrame } from './ops.ts';
import { Session } from './session.ts';
import type { RealtimeTier } from './tier.ts';

export const REALTIME_PATH = '/realtime/ws';
/** Frames this many times over the limit close the connection (1009) instead of earning an error frame. */
const HARD_LIMIT_FACTOR = 4;
const CLOSE_GRACE_MS = 1_000;

type Admitted = { principal: Principal; token: string; scope: TenantScope };
type Admission = Admitted | { status: 401 | 403 | 503; error: string };

export interface RealtimeServer {
  readonly upgrade: UpgradeHandler;
  /** One keepalive round: drop connections that missed the last pong, ping the others. */
  ping(): void;
  /** Closes every connection (1001), waiting at most a second for the handshakes. */
  closeAll(): Promise<void>;
}

export function createRealtimeServer(
  tier: RealtimeTier, config: RealtimeConfig, auth: Authenticator, log: Logger,
): RealtimeServer {
  const wss = new WebSocketServer({ noServer: true, clientTracking: false, maxPayload: config.maxFrameBytes * HARD_LIMIT_FACTOR });
  const attach = (ws: WebSocket, admitted: Admitted) => {
    const session = new Session(ws, admitted.principal, admitted.token, admitted.scope, config.maxBufferedBytes, log);
    tier.hub.sessions.add(session);
    ws.on('error', () => undefined); // e.g. a frame over maxPayload: ws closes with 1009 itself
    ws.on('pong', () => (session.alive = true));
    ws.on('message', (data, binary) => onFrame(tier, session, config, data as Buffer, binary));
    ws.on('close', () => onClose(tier, session));
    closeAtExpiry(ws, admitted.token);
  };
  return {
    upgrade(request, socket, head) {
      socket.on('error', () => undefined);
      admit(request, auth).then((admission) => {
        if ('status' in admission) return refuse(socket, admission.status, admission.error);
        wss.handleUpgrade(request, socket, head, (ws) => attach(ws, admission));
      }, (err: unknown) => {
        log.error({ err }, 'realtime: upgrade failed');
        refuse(socket, 503, 'service unavailable');
      });
    },
    ping() {
      for (const session of tier.hub.sessions) {
        if (!session.alive) {
          session.ws.terminate();
          continue;
        }
        session.alive = false;
        session.ws.ping();
      }
    },
    async closeAll() {
      const sessions = [...tier.hub.sessions];
      await Promise.all(sessions.map((s) => closeGracefully(s.ws)));
    },
  };
}

async function admit(request: IncomingMessage, auth: Authenticator): Promise<Admission> {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const token = url.searchParams.get('token') ?? bearerToken(request.headers.authorization);
  if (!token) return { status: 401, error: 'authentication required' };
  let principal: Principal;
  try {
    principal = await auth.authenticate(token);
  } catch (error) {
    // Only a refused token is the client's fault; a database outage is not a 401.
    if (error instanceof InvalidTokenError) return { status: 401, error: 'invalid or expired token' };
    throw error;
  }
  const header = request.headers['x-tenant-id'];
  const requested = url.searchParams.get('tenant') ?? (Array.isArray(header) ? header[0] : header);
  try {
    return { principal, token, scope: resolveScope(principal, requested) };
  } catch {
    return { status: 403, error: 'tenant not allowed' };
  }
}

/** A connection lives no longer than its access token: closed with 4001 when it expires (the client reconnects with a fresh one). */
function closeAtExpiry(ws: WebSocket, token: string): void {
  const expiresAt = tokenExpiresAt(token);
  if (expiresAt === null) return;
  const arm = () => {
    const left = expiresAt - Date.now();
    if (left <= 0) return ws.close(SESSION_CLOSE, 'token expired');
    const timer = setTimeout(arm, Math.min(left, 2 ** 31 - 1));
    timer.unref();
    ws.once('close', () => clearTimeout(timer));
  };
  arm();
}

function refuse(socket: Duplex, status: number, error: string): void {
  const body = JSON.stringify({ error, code: codeOfStatus(status) });
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\n`
    + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

function closeGracefully(ws: WebSocket): Promise<void> {
  return new Promise((done) => {
    if (ws.readyState === ws.CLOSED) return done();
    const timer = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
    ws.once('close', () => {
      clearTimeout(timer);
      done();
    });
    ws.close(1001, 'server shutting down');
  });
}
