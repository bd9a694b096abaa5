/**
 * Limits and timers of the realtime tier, from SVC_REALTIME_* variables.
 * Read at start; a bad value stops the server with a message naming it.
 */
import { readers, type Env } from '../config/read.ts';

export interface RealtimeConfig {
  /** Largest client frame handled; above it an `frame_too_large` error frame. */
  readonly maxFrameBytes: number;
  /** Send buffer of one connection; a consumer above it is closed with 4008. */
  readonly maxBufferedBytes: number;
  /** Interval of server pings; a connection that missed the previous pong is dropped. */
  readonly pingMs: number;
  /** Interval of the instance heartbeat; an instance silent for 3 of them is dead. */
  readonly heartbeatMs: number;
  readonly maxChannelsPerConnection: number;
}

export function readRealtimeConfig(env: Env): RealtimeConfig {
  const r = readers(env);
  return {
    maxFrameBytes: r.int('SVC_REALTIME_MAX_FRAME_BYTES', 64 * 1024, 256, 16 * 1024 * 1024),
    maxBufferedBytes: r.int('SVC_REALTIME_MAX_BUFFERED_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    pingMs: r.int('SVC_REALTIME_PING_MS', 30_000, 50, 3_600_000),
    heartbeatMs: r.int('SVC_REALTIME_HEARTBEAT_MS', 5_000, 50, 600_000),
    maxChannelsPerConnection: r.int('SVC_REALTIME_MAX_CHANNELS', 100, 1, 100_000),
  };
}
