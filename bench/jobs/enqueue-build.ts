/**
 * `npx tsx bench/jobs/enqueue-build.ts`: the CPU time of POST /jobs' one-job
 * path in this process without any I/O: input normalised, ids made, the
 * statement (row, JobEnqueued event, audit entry) and its values built, sent
 * to a database that answers at once. What the statement's construction costs
 * a request, apart from sockets and Postgres, on a shared machine (process CPU
 * time, not wall time). ENQUEUE_CALLS (default 50,000) after 5,000 to warm up.
 */
import pino from 'pino';
import { createAuditLog } from '../../runtime/audit/log.ts';
import type { Db } from '../../runtime/db/index.ts';
import { createEventStore } from '../../runtime/events/store.ts';
import { enqueueJobs } from '../../runtime/jobs/enqueue.ts';

const CALLS = Number(process.env.ENQUEUE_CALLS ?? 50_000);
const answering = { any: async () => [{ id: 'x' }] } as unknown as Db;
const logs = {
  events: createEventStore(answering),
  audit: createAuditLog(answering, { policy: 'full', trustForwardedFor: false }, pino({ level: 'silent' })),
  prepared: true,
};
const caller = {
  actorId: 'user-1', tenantId: null, actor: { kind: 'user' as const, id: 'user-1', role: 'Viewer' as const },
  request: { ip: '127.0.0.1', userAgent: 'autocannon', requestId: 'req-1' },
};
const input = { queue: 'bench', kind: 'noop', payload: { n: 1, text: 'a job of the bench' } };

for (let i = 0; i < 5_000; i++) await enqueueJobs(answering, logs, [input], caller);
const before = process.cpuUsage();
for (let i = 0; i < CALLS; i++) await enqueueJobs(answering, logs, [input], caller);
const used = process.cpuUsage(before);
console.log(`one-job enqueue without I/O: ${((used.user + used.system) / CALLS).toFixed(1)} µs of CPU a call (${CALLS} calls)`);
