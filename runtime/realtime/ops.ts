/** What each client frame does (CONTRACT section 6). */
import type { RealtimeConfig } from './config.ts';
import { FrameError, frames, parseFrame, type ClientFrame } from './protocol.ts';
import type { Session } from './session.ts';
import type { RealtimeTier } from './tier.ts';

/** Entry point for one received WebSocket frame. */
export function onFrame(tier: RealtimeTier, session: Session, config: RealtimeConfig, data: Buffer, binary: boolean): void {
  session.alive = true;
  session.enqueue(() => {
    if (binary) throw new FrameError('invalid_frame', 'frames must be JSON text');
    if (data.length > config.maxFrameBytes) {
      throw new FrameError('frame_too_large', `frames are limited to ${config.maxFrameBytes} bytes`);
    }
    const frame = parseFrame(data.toString('utf8'));
    if (frame instanceof FrameError) throw frame;
    return handle(tier, session, config, frame);
  });
}

async function handle(tier: RealtimeTier, session: Session, config: RealtimeConfig, frame: ClientFrame): Promise<void> {
  switch (frame.op) {
    case 'ping':
      return session.send(frames.pong());
    case 'subscribe':
      return subscribe(tier, session, config, frame.channel);
    case 'unsubscribe':
      if (!session.channels.has(frame.channel)) throw new FrameError('not_subscribed', 'not subscribed', frame.channel);
      return tier.leave(session, frame.channel);
    case 'publish':
      if (tier.isGuarded(frame.channel)) {
        throw new FrameError('forbidden', 'only the server publishes on this channel', frame.channel);
      }
      return tier.publishMessage({
        kind: 'message', origin: tier.instanceId, tenant: session.tenant, channel: frame.channel, raw: frame.raw,
        from: session.userId,
      }, session);
    case 'presence':
      await authorize(tier, session, frame.channel);
      return session.send(frames.presence(frame.channel, await tier.members(session.tenant, frame.channel)));
  }
}

async function subscribe(tier: RealtimeTier, session: Session, config: RealtimeConfig, channel: string): Promise<void> {
  if (session.channels.has(channel)) return session.send(frames.subscribed(channel));
  if (session.channels.size >= config.maxChannelsPerConnection) {
    throw new FrameError('too_many_channels', `at most ${config.maxChannelsPerConnection} channels per connection`, channel);
  }
  await authorize(tier, session, channel);
  await tier.join(session, channel);
}

async function authorize(tier: RealtimeTier, session: Session, channel: string): Promise<void> {
  if (!(await tier.mayAccess(session.principal, session.scope, channel))) {
    throw new FrameError('forbidden', 'not allowed on this channel', channel);
  }
}

/** A closed connection leaves its channels, after any frame still being handled. */
export function onClose(tier: RealtimeTier, session: Session): void {
  tier.hub.sessions.delete(session);
  session.enqueue(async () => {
    for (const channel of [...session.channels]) await tier.leave(session, channel);
  });
}
