/**
 * The wire protocol of /realtime/ws (CONTRACT section 6): parsing client
 * frames and rendering server frames. Server frames are rendered to strings
 * once and sent to every subscriber as they are.
 */
import type { SafeError } from '../http/errors.ts';
import { rawMember } from './raw-json.ts';

export const CHANNEL_MAX_LENGTH = 200;

export type ClientFrame =
  | { readonly op: 'subscribe' | 'unsubscribe' | 'presence'; readonly channel: string }
  | { readonly op: 'publish'; readonly channel: string; /** JSON text of `data`, as the client wrote it. */ readonly raw: string }
  | { readonly op: 'ping' };

export type ErrorCode =
  | 'malformed_json' | 'invalid_frame' | 'unknown_op' | 'missing_channel' | 'invalid_channel' | 'missing_data'
  | 'frame_too_large' | 'forbidden' | 'not_subscribed' | 'too_many_channels' | 'unavailable';

export class FrameError {
  constructor(readonly code: ErrorCode, readonly message: string, readonly channel?: string) {}

  /** This wire's rendering of a SafeError thrown by another capability (a channel guard, say). */
  static fromSafe(error: SafeError, channel?: string): FrameError {
    const code: ErrorCode = error.status === 403 || error.status === 401 ? 'forbidden'
      : error.status >= 500 ? 'unavailable' : 'invalid_frame';
    return new FrameError(code, error.message, channel);
  }
}

const CHANNEL_OPS = new Set(['subscribe', 'unsubscribe', 'presence', 'publish']);

export function parseFrame(text: string): ClientFrame | FrameError {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return new FrameError('malformed_json', 'frame is not valid JSON');
  }
  if (typeof frame !== 'object' || frame === null || Array.isArray(frame)) {
    return new FrameError('invalid_frame', 'frame must be a JSON object');
  }
  const { op, channel } = frame as Record<string, unknown>;
  if (op === 'ping') return { op };
  if (typeof op !== 'string' || !CHANNEL_OPS.has(op)) {
    return new FrameError('unknown_op', `unknown op ${JSON.stringify(op ?? null).slice(0, 40)}`);
  }
  const problem = channelProblem(channel);
  if (problem) return problem;
  const name = channel as string;
  if (op !== 'publish') return { op: op as 'subscribe' | 'unsubscribe' | 'presence', channel: name };
  if (!('data' in (frame as object))) return new FrameError('missing_data', 'publish needs data', name);
  return { op, channel: name, raw: rawMember(text, 'data') ?? 'null' };
}

function channelProblem(channel: unknown): FrameError | null {
  if (channel === undefined || channel === null || channel === '') {
    return new FrameError('missing_channel', 'frame needs a channel');
  }
  if (typeof channel !== 'string' || channel.length > CHANNEL_MAX_LENGTH || /[\u0000-\u001f\u007f]/.test(channel)) {
    return new FrameError('invalid_channel', `channel must be a string of 1 to ${CHANNEL_MAX_LENGTH} printable characters`);
  }
  return null;
}

const str = JSON.stringify;

export const frames = {
  subscribed: (channel: string) => `{"op":"subscribed","channel":${str(channel)}}`,
  /** `raw` is JSON text, inserted as is so that the payload stays opaque. */
  message: (channel: string, raw: string, from: string | null) =>
    `{"op":"message","channel":${str(channel)},"data":${raw},"from":${str(from)}}`,
  presence: (channel: string, members: readonly Member[]) => str({ op: 'presence', channel, members }),
  join: (channel: string, userId: string) => str({ op: 'join', channel, userId }),
  leave: (channel: string, userId: string) => str({ op: 'leave', channel, userId }),
  pong: () => '{"op":"pong"}',
  error: (e: FrameError) => str({ op: 'error', code: e.code, message: e.message, ...(e.channel ? { channel: e.channel } : {}) }),
};

export interface Member {
  readonly userId: string;
  /** ISO timestamp of the user's earliest join on any instance. */
  readonly joinedAt: string;
}
