/**
 * Cross-instance delivery latency of modelChanges under load: a writer
 * creates a record every PROBE_MS on one instance (as a user of its own
 * tenant, so the probe subscriber hears only these), a graphql-ws subscriber
 * on another instance notes when each change arrives.
 */
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const PROBE_MS = 20;

export interface ProbeResult {
  readonly sent: number;
  readonly delivered: number;
  /** From the create's acknowledgement to the delivery (0 when the change arrived first). */
  readonly ackP50: number;
  readonly ackP99: number;
  /** From sending the create to the delivery (includes the create's own latency under load). */
  readonly sendP50: number;
  readonly sendP99: number;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export async function probe(writerUrl: string, subscriberUrl: string, token: string, seconds: number): Promise<ProbeResult> {
  const sentAt = new Map<string, number>();
  const ackAt = new Map<string, number>();
  const receivedAt = new Map<string, number>();
  const client = createClient({ url: `${subscriberUrl.replace('http', 'ws')}/graphql/ws`, webSocketImpl: WebSocket, connectionParams: { token }, retryAttempts: 0 });
  await new Promise<void>((ready) => {
    client.on('connected', () => ready());
    client.subscribe({ query: 'subscription { modelChanges(model: "Item") { recordId } }' }, {
      next: (message) => {
        const id = (message.data as any)?.modelChanges?.recordId;
        if (id && !receivedAt.has(id)) receivedAt.set(id, performance.now());
      },
      error: () => undefined,
      complete: () => undefined,
    });
  });
  await new Promise((resolve) => setTimeout(resolve, 200)); // the subscription registers after 'connected'
  const writes: Promise<void>[] = [];
  const until = performance.now() + seconds * 1000;
  let n = 0;
  while (performance.now() < until) {
    const start = performance.now();
    writes.push(fetch(`${writerUrl}/graphql`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: 'mutation($d: JSON!) { create(model: "Item", data: $d) }', variables: { d: { name: `probe ${n++}`, price: 1 } } }),
    }).then((r) => r.json()).then((body: any) => {
      const id = body?.data?.create?.id;
      if (!id) return;
      sentAt.set(id, start);
      ackAt.set(id, performance.now());
    }).catch(() => undefined));
    await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
  }
  await Promise.all(writes);
  const deadline = performance.now() + 2000;
  while (performance.now() < deadline && [...sentAt.keys()].some((id) => !receivedAt.has(id))) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await client.dispose();
  const ack: number[] = [];
  const send: number[] = [];
  for (const [id, at] of receivedAt) {
    if (!sentAt.has(id)) continue;
    ack.push(Math.max(0, at - ackAt.get(id)!));
    send.push(at - sentAt.get(id)!);
  }
  return {
    sent: sentAt.size, delivered: ack.length,
    ackP50: percentile(ack, 50), ackP99: percentile(ack, 99), sendP50: percentile(send, 50), sendP99: percentile(send, 99),
  };
}
