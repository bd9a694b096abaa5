/**
 * A worker that uses the specification's per-job routes, as a user without
 * the SDK would write one: lease LEASE jobs (`POST /jobs/lease`), then
 * acknowledge each with `POST /jobs/{id}/complete`, IN_FLIGHT at a time,
 * leasing again as the queue of leased jobs runs low. Runs in a process of its
 * own (the server's event loop is not shared) over keep-alive node:http, until
 * TARGET jobs are completed; prints one JSON line: elapsed ms and the
 * complete latencies (p50, p99, max) in ms.
 */
import { workerHttp } from './worker-http.ts';

const baseUrl = new URL(process.env.BASE_URL!);
const token = process.env.WORKER_TOKEN!;
const target = Number(process.env.TARGET);
const inFlight = Number(process.env.IN_FLIGHT ?? 16);
const leaseSize = Number(process.env.LEASE ?? 50);
const queue = process.env.QUEUE ?? 'bench';
const http = workerHttp(baseUrl, token, inFlight);
const { post } = http;

interface Leased { id: string; leaseId: string }

const pending: Leased[] = [];
const latencies: number[] = [];
let completed = 0;
let taken = 0;
let leasing: Promise<void> | null = null;

async function lease(): Promise<void> {
  const reply = await post('/jobs/lease', { queues: [queue], capacity: leaseSize, visibilitySecs: 60 });
  if (reply.status !== 200) throw new Error(`lease: ${reply.status} ${reply.text}`);
  const { jobs } = JSON.parse(reply.text) as { jobs: Leased[] };
  pending.push(...jobs);
}

/** One lease at a time; a lane that finds the queue empty waits for it. */
async function next(): Promise<Leased | null> {
  while (pending.length === 0) {
    if (taken >= target) return null;
    leasing ??= lease().finally(() => (leasing = null));
    await leasing;
  }
  // Lease ahead while the last ones are completed, as a pipelining worker would.
  if (pending.length < inFlight && !leasing && taken + pending.length < target) leasing = lease().finally(() => (leasing = null));
  taken++;
  return pending.shift()!;
}

async function lane(): Promise<void> {
  for (;;) {
    const job = await next();
    if (!job) return;
    const started = performance.now();
    const reply = await post(`/jobs/${encodeURIComponent(job.id)}/complete`, { leaseId: job.leaseId, result: null });
    if (reply.status !== 204) throw new Error(`complete: ${reply.status} ${reply.text}`);
    latencies.push(performance.now() - started);
    completed++;
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: inFlight }, lane));
const ms = performance.now() - started;
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
process.stdout.write(`${JSON.stringify({ ms, completed, p50: at(0.5), p99: at(0.99), max: latencies.at(-1) })}\n`);
http.close();
