/**
 * Live updates over the service's own sockets: GraphQL subscriptions
 * (`modelChanges`, graphql-transport-ws on /graphql/ws) for run and job
 * transitions, and the realtime tier (/realtime/ws) for job progress frames
 * on `job:{id}`. Each returns a function that closes it.
 */
import { session } from './api.ts';

const wsUrl = (path: string) => `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}`;

export interface Change { eventType: string; modelName: string; eventId: string; recordId: string | null }

export function watchModel(model: string, onChange: (change: Change) => void): () => void {
  const socket = new WebSocket(wsUrl('/graphql/ws'), 'graphql-transport-ws');
  socket.onopen = () => {
    const payload: Record<string, string> = { authorization: `Bearer ${session.token ?? ''}` };
    if (session.tenant && session.isOperator) payload['x-tenant-id'] = session.tenant;
    socket.send(JSON.stringify({ type: 'connection_init', payload }));
  };
  socket.onmessage = (message) => {
    const frame = JSON.parse(String(message.data)) as { type: string; payload?: { data?: { modelChanges?: Change } } };
    if (frame.type === 'connection_ack') {
      socket.send(JSON.stringify({
        id: '1', type: 'subscribe',
        payload: { query: 'subscription($m: String) { modelChanges(model: $m) { eventType modelName eventId recordId } }', variables: { m: model } },
      }));
    } else if (frame.type === 'next' && frame.payload?.data?.modelChanges) {
      onChange(frame.payload.data.modelChanges);
    } else if (frame.type === 'ping') {
      socket.send(JSON.stringify({ type: 'pong' }));
    }
  };
  return () => socket.close();
}

export interface Progress { jobId: string; percent?: number; message?: string; data?: unknown }

export function watchJobProgress(jobId: string, onProgress: (progress: Progress) => void): () => void {
  const query = new URLSearchParams({ token: session.token ?? '' });
  if (session.tenant && session.isOperator) query.set('tenant', session.tenant);
  const socket = new WebSocket(wsUrl(`/realtime/ws?${query}`));
  const channel = `job:${jobId}`;
  socket.onopen = () => socket.send(JSON.stringify({ op: 'subscribe', channel }));
  socket.onmessage = (message) => {
    const frame = JSON.parse(String(message.data)) as { op: string; channel?: string; data?: Progress };
    if (frame.op === 'message' && frame.channel === channel && frame.data) onProgress(frame.data);
  };
  return () => socket.close();
}
