/**
 * `GET /metrics` (CONTRACT section 13): Prometheus text from prom-client.
 *
 * Each service has its own Registry (tests run several services in one
 * process): HTTP requests by matched route pattern (never the raw URL) and
 * status, GraphQL operations by type and outcome, lease-to-complete latency,
 * jobs and audit entries deleted by the retention sweeps, and gauges read at scrape time (jobs by
 * queue and status from the maintained counters of jobs/counts.ts,
 * realtime connections and channels, the database pool). Process metrics
 * (CPU, memory, event loop, GC) describe the process, not a service: they are
 * collected once per process into a registry of their own, never prom-client's
 * global one, and appended to every service's answer.
 *
 * Labels never take a value a client chooses without a bound: clients name
 * queues freely, so each queue-labelled series keeps its own label for at
 * most MAX_QUEUE_SERIES queues and folds the rest into OTHER_QUEUES.
 *
 * Access: with SVC_METRICS_TOKEN unset, only loopback peers (the socket's
 * address; X-Forwarded-For is never consulted); with it set, only
 * `Authorization: Bearer <token>` (compared in constant time).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { HttpError } from '../http/errors.ts';
import { defineCapability, type ServiceContext } from '../core/index.ts';
import { compile, sql } from '../sql/index.ts';
import { countsWhere } from '../jobs/counts.ts';

export type GraphqlOperationType = 'query' | 'mutation' | 'subscription' | 'unknown';
/** `success`: no errors; `error`: executed with errors; `invalid`: refused before execution (parse, validation). */
export type GraphqlOutcome = 'success' | 'error' | 'invalid';

/** What other capabilities report into (`ctx.services.metrics`). */
export interface Metrics {
  /** `seconds` null: not timed (a subscription started over WebSocket lives on). */
  observeGraphql(type: GraphqlOperationType, outcome: GraphqlOutcome, seconds: number | null): void;
  /** A job completed `seconds` after it was leased. */
  observeLeaseToComplete(queue: string, seconds: number): void;
  /** The job retention sweep deleted `count` jobs of `status`. */
  observeJobsDeleted(status: 'succeeded' | 'dead', count: number): void;
}

declare module '../core/capability.ts' {
  interface Services {
    metrics: Metrics;
  }
}

export const METRICS_PATH = '/metrics';

/** How many queues get series of their own; every other queue is counted under OTHER_QUEUES. */
export const MAX_QUEUE_SERIES = 50;
/** The `queue` label of the folded queues (parentheses: not what a client is likely to name a queue). */
export const OTHER_QUEUES = '(other)';

/**
 * Jobs by queue and status: the MAX_QUEUE_SERIES queues holding the most jobs
 * keep their name, the others are summed under OTHER_QUEUES.
 */
const JOBS_BY_QUEUE = compile(sql`
  select case when rank <= ${sql.value(MAX_QUEUE_SERIES)} then queue else ${sql.value(OTHER_QUEUES)} end as queue, status,
         sum(count)::int as count
    from (select queue, status, count, dense_rank() over (order by total desc, queue) as rank
            from (select queue, status, sum(count) as count, sum(sum(count)) over (partition by queue) as total
                    from (${countsWhere(sql`true`)}) as scopes group by queue, status) as counted) as ranked
   group by 1, 2`);

/**
 * The queue label for an observation: the first MAX_QUEUE_SERIES queues this
 * instance sees keep their name, later ones share OTHER_QUEUES.
 */
function queueLabels(): (queue: string) => string {
  const named = new Set<string>();
  return (queue) => {
    if (named.has(queue)) return queue;
    if (named.size >= MAX_QUEUE_SERIES) return OTHER_QUEUES;
    named.add(queue);
    return queue;
  };
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LEASE_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600];

let processRegistry: Registry | null = null;

/** Process metrics, registered once per process whatever the number of services in it. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export const metrics = defineCapability({
  name: 'metrics',
  provides: ['metrics'],
  requires: ['feed', 'realtime', 'audit'],
  async init(ctx) {
    const registry = new Registry();
    const observer = createMetrics(ctx, registry);
    ctx.services.metrics = observer.metrics;
    ctx.observeRequests(observer.request);
    const allowed = accessCheck(ctx.config.metrics.token);
    ctx.router.get(METRICS_PATH, async (koa) => {
      allowed(koa);
      const body = `${await registry.metrics()}\n${await processMetrics().metrics()}`;
      koa.set('Cache-Control', 'no-store');
      koa.type = registry.contentType;
      koa.body = body;
    });
  },
});

function createMetrics(ctx: ServiceContext<'feed' | 'realtime' | 'audit'>, registry: Registry) {
  const httpRequests = new Counter({
    name: 'svc_http_requests_total', help: 'HTTP requests by method, matched route pattern and status.',
    labelNames: ['method', 'route', 'status'], registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds', help: 'HTTP request latency by method, matched route pattern and status.',
    labelNames: ['method', 'route', 'status'], buckets: LATENCY_BUCKETS, registers: [registry],
  });
  const graphqlOps = new Counter({
    name: 'svc_graphql_operations_total', help: 'GraphQL operations by type and outcome (HTTP, and operations started over /graphql/ws).',
    labelNames: ['type', 'outcome'], registers: [registry],
  });
  const graphqlDuration = new Histogram({
    name: 'svc_graphql_operation_duration_seconds', help: 'GraphQL operation latency by type.',
    labelNames: ['type'], buckets: LATENCY_BUCKETS, registers: [registry],
  });
  const leaseToComplete = new Histogram({
    name: 'svc_job_lease_to_complete_seconds', help: 'Time from a job\'s lease to its completion, by queue.',
    labelNames: ['queue'], buckets: LEASE_BUCKETS, registers: [registry],
  });
  new Gauge({
    name: 'svc_feed_lag_seconds', help: 'How far the change feed is behind the newest committed event.',
    registers: [registry],
    // The feed capability starts before this one: its reader's last measured lag, read at scrape time.
    collect() {
      const stats = ctx.services.feed?.stats();
      if (stats) this.set(Math.max(0, stats.lastLagMs / 1000));
    },
  });
  new Gauge({
    name: 'svc_jobs', help: 'Jobs by queue and status (read from the database at scrape time).',
    labelNames: ['queue', 'status'], registers: [registry],
    async collect() {
      const rows = await ctx.db.manyOrNone<{ queue: string; status: string; count: number }>(
        JOBS_BY_QUEUE.text, JOBS_BY_QUEUE.values,
      );
      this.reset();
      for (const row of rows) this.set({ queue: row.queue, status: row.status }, row.count);
    },
  });
  const jobsDeleted = new Counter({
    name: 'svc_jobs_deleted_total', help: 'Jobs deleted by the retention sweep (SVC_JOB_RETAIN_*) on this instance, by status.',
    labelNames: ['status'], registers: [registry],
  });
  const auditDeleted = new Counter({
    name: 'svc_audit_deleted_total', help: 'Audit entries deleted by the retention sweep (SVC_AUDIT_RETAIN_DAYS) on this instance.',
    registers: [registry],
  });
  ctx.services.audit.onPruned((rows) => auditDeleted.inc(rows));
  new Gauge({
    name: 'svc_realtime_connections', help: 'Open realtime WebSocket connections on this instance.',
    registers: [registry],
    collect() {
      this.set(ctx.services.realtime?.stats().connections ?? 0);
    },
  });
  new Gauge({
    name: 'svc_realtime_channels', help: 'Realtime channels with at least one subscriber on this instance.',
    registers: [registry],
    collect() {
      this.set(ctx.services.realtime?.stats().channels ?? 0);
    },
  });
  new Gauge({
    name: 'svc_db_pool_connections', help: 'Database pool: total and idle connections, and callers waiting for one.',
    labelNames: ['state'], registers: [registry],
    collect() {
      const pool = ctx.db.$pool as { totalCount?: number; idleCount?: number; waitingCount?: number };
      this.set({ state: 'total' }, pool.totalCount ?? 0);
      this.set({ state: 'idle' }, pool.idleCount ?? 0);
      this.set({ state: 'waiting' }, pool.waitingCount ?? 0);
    },
  });
  new Gauge({
    name: 'svc_db_pool_max', help: 'Largest size of the database pool (SVC_DB_POOL_SIZE).',
    registers: [registry],
    collect() {
      this.set(ctx.config.dbPoolSize);
    },
  });

  const latencyQueue = queueLabels();
  const metrics: Metrics = {
    observeGraphql(type, outcome, seconds) {
      graphqlOps.inc({ type, outcome });
      if (seconds !== null) graphqlDuration.observe({ type }, seconds);
    },
    observeLeaseToComplete(queue, seconds) {
      leaseToComplete.observe({ queue: latencyQueue(queue) }, Math.max(0, seconds));
    },
    observeJobsDeleted(status, count) {
      jobsDeleted.inc({ status }, count);
    },
  };
  const request = (koa: Koa.Context, seconds: number) => {
    // The router's pattern (`/jobs/:id`), never the raw URL: one series per route, whatever the ids.
    const route = (koa as { _matchedRoute?: string | RegExp })._matchedRoute;
    const labels = { method: koa.method, route: route === undefined ? 'unmatched' : String(route), status: String(koa.status) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, seconds);
  };
  return { metrics, request };
}

/** The socket's peer is loopback: 127.0.0.0/8 or ::1 (IPv4-mapped too). */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return v4.startsWith('127.') || address === '::1';
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function accessCheck(token: string | null): (koa: Koa.Context) => void {
  if (token === null) {
    return (koa) => {
      if (!isLoopback(koa.req.socket.remoteAddress)) {
        throw new HttpError(403, 'metrics are served to loopback clients only; set SVC_METRICS_TOKEN to scrape remotely');
      }
    };
  }
  const expected = digest(token);
  return (koa) => {
    const header = koa.get('authorization');
    const match = /^Bearer (.+)$/i.exec(header);
    // Digests of equal length, so the comparison time says nothing about the token.
    if (!match || !timingSafeEqual(digest(match[1]), expected)) {
      throw new HttpError(401, 'a valid metrics token is required', {}, { 'WWW-Authenticate': 'Bearer realm="metrics"' });
    }
  };
}
