/**
 * The worker plane, one implementation (ADR 009, STYLE 21): each call of a
 * worker (lease, heartbeat, progress, complete, fail) is ONE statement, one
 * round trip, atomic on its own: it finds its caller, checks the lease,
 * changes the job and appends the job's event, in CTEs. Its one result row
 * says which of those held, so the route answers 401, 403 or 409 from it.
 *
 * Two callers run the same statements, differing only in their first CTE:
 * a worker token (the routes: `who` is the token's SHA-256, looked up on every
 * call, so a revocation holds on the very next request: no cache), and the
 * runtime's own consumers in process (`InternalQueue`: `who` is a worker id,
 * any queue, any tenant). Where a 400 must wait for a 401, 403 or 409, the
 * route asks `check`, a read-only look at the token and the lease, instead
 * of running the call step by step.
 *
 * The statements are built with runtime/sql and compiled once (statement.ts);
 * their texts are fixed, so on a server they run as named prepared statements
 * (parsed and planned once per pooled connection); behind a transaction
 * pooler (SVC_DB_PREPARED off) and on PGlite they run unnamed, values still
 * bound server-side. A retry's delay is svc_job_backoff_secs (0003_backoff.sql).
 */
import type { Db, Tx } from '../db/index.ts';
import type { EventStore } from '../events/index.ts';
import { newId } from '../ids.ts';
import { compile, sql, type Sql, type SqlCast, type SqlValue } from '../sql/index.ts';
import { retryJitter } from './backoff.ts';
import { leasedAtMs, LEASE_ID, type LeasedJob, type LeasedRow } from './lease.ts';
import { prepare, type Prepared } from '../sql/prepare.ts';
import type { FailOutcome, WorkerIdentity } from './types.ts';

export type { FailOutcome } from './types.ts';

export interface CompleteItem {
  readonly id: string;
  readonly leaseId: string;
  readonly result: unknown;
}

/** How long a completed job was leased for (the database's clock at both ends). */
export interface LeaseLatency {
  readonly queue: string;
  readonly seconds: number;
}

type Arg = (name: 'who', cast?: SqlCast) => SqlValue;

/** Who runs a statement: the row of `w`, its first CTE (none: the token is unknown or revoked). `who` is its value. */
const CALLERS = {
  token: (arg: Arg) => sql`select id, queues, tenant_id from svc_worker_tokens where token_hash = ${arg('who', 'text')} and not is_revoked`,
  internal: (arg: Arg) => sql`select ${arg('who', 'text')} as id, array['*']::text[] as queues, null::text as tenant_id`,
} as const;
type CallerKind = keyof typeof CALLERS;

/** One result row whatever happened: `(values (1)) one left join <cte> on true`. */
const ONE_ROW = sql`(values (1)) as one(x)`;

/** The stream type of a job's events. */
const JOB = sql`'Job'`;

export interface LeaseCall {
  readonly queues: readonly string[];
  readonly capacity: number;
  readonly visibilitySecs: number;
}

export type LeaseOutcome =
  | { readonly worker: null }
  | { readonly worker: WorkerIdentity; readonly jobs: LeasedJob[] };

export interface CompleteOutcome {
  readonly worker: boolean;
  readonly completed: string[];
  readonly stale: string[];
  readonly leaseLatencies: LeaseLatency[];
  /** The same latencies by job id. */
  readonly latencyById: ReadonlyArray<readonly [string, LeaseLatency]>;
}

/** 'unauthorized': the token is unknown or revoked; null: the lease is not current. */
export type Extended = 'unauthorized' | null | { readonly tenantId: string | null };
export type Failed = 'unauthorized' | null | FailOutcome;

/** What `check` found: the token's worker (null: unknown or revoked) and whether the lease asked about is current. */
export interface Checked {
  readonly worker: WorkerIdentity | null;
  readonly held: boolean;
}

export interface WorkerStatements {
  lease(tokenHash: string, call: LeaseCall): Promise<LeaseOutcome>;
  complete(tokenHash: string, items: readonly CompleteItem[]): Promise<CompleteOutcome>;
  extend(tokenHash: string, id: string, leaseId: string, visibilitySecs: number | null): Promise<Extended>;
  fail(tokenHash: string, id: string, leaseId: string, error: string, retryable: boolean): Promise<Failed>;
  /** Read-only: the token's worker and, given a job and lease, whether that lease is current. Changes nothing. */
  check(tokenHash: string, lease: { readonly id: string; readonly leaseId: string } | null): Promise<Checked>;
}

export interface LeaseArgs {
  readonly who: string;
  readonly queues: readonly string[];
  readonly capacity: number;
  readonly visibilitySecs: number;
  /** One event id per job the lease may take (capacity of them). */
  readonly eventIds: readonly string[];
}

export interface CompleteArgs {
  readonly who: string;
  /** Parallel arrays, one entry per job. */
  readonly ids: readonly string[];
  readonly leaseIds: readonly string[];
  /** JSON text, or null. */
  readonly results: readonly (string | null)[];
  readonly eventIds: readonly string[];
}

export interface ExtendArgs {
  readonly who: string;
  readonly id: string;
  readonly leaseId: string;
  /** null: the leased length. */
  readonly visibilitySecs: number | null;
}

export interface FailArgs {
  readonly who: string;
  readonly id: string;
  readonly leaseId: string;
  readonly retryable: boolean;
  readonly error: string;
  /** In [0.5, 1): see retryJitter. */
  readonly jitter: number;
  readonly eventId: string;
}

export interface Built {
  readonly lease: Prepared<LeaseArgs>;
  readonly complete: Prepared<CompleteArgs>;
  readonly extend: Prepared<ExtendArgs>;
  readonly fail: Prepared<FailArgs>;
}

/**
 * The four statements for a caller, compiled once (exported for plan tests).
 * When the history policy drops Job events (a schema model named Job under
 * SVC_HISTORY_POLICY=off), they append none.
 */
export function workerStatementTexts(events: EventStore, caller: CallerKind = 'token'): Built {
  const appended = (fragment: Sql | null) => (fragment === null ? sql.empty : sql`, appended as (${fragment})`);
  const w = CALLERS[caller];
  // Per queue, svc_jobs_pick (0007_pick.sql): a walk of the ready index in (priority desc, id)
  // order that stops at the limit, planned with sorts disabled so that statistics calling the
  // table empty cannot turn it into a sort of every queued row; a caller of any tenant walks
  // svc_jobs_ready, a tenant-bound one svc_jobs_ready_tenant. `queue = any(queues)` would
  // sort every queued row of the queues on each lease. Only the jobs picked (at most
  // capacity per queue) are sorted here, to merge the queues.
  // The update finds the picked rows by their ctid alone (a TID scan, the rows locked by
  // the pick; a `status = 'queued'` beside it lets a partial index on queued rows be
  // walked instead, with the ctids as a filter): by `id = any(...)`, statistics that call the table empty (a queue drained,
  // vacuumed, then filled in one burst) made the planner walk the whole
  // svc_jobs_tenant_status index for the ids, ~4 ms a job (docs/performance.md).
  // A picked row whose newest version the statement's snapshot cannot see (updated
  // meanwhile, or committed after the statement began: the pick runs on its own
  // snapshot) is then not leased by this call: it stays queued.
  const lease = prepare<LeaseArgs>((arg) => {
    const leasedEvents = appended(events.appendFrom('Job', sql`numbered r`, {
      id: sql`(${arg('eventIds', 'text[]')})[r.n]`, streamType: JOB, streamId: sql`r.id`, eventType: sql`'JobLeased'`,
      data: sql`jsonb_build_object('workerId', r.worker_id, 'attempt', r.attempts)`, actorId: sql`null`, tenantId: sql`r.tenant_id`,
    }));
    const capacity = () => arg('capacity', 'int');
    const visibility = () => arg('visibilitySecs', 'int');
    return sql`
      with w as (${w(arg)}),
      allowed as (select id, tenant_id from w where '*' = any(queues) or queues @> ${arg('queues', 'text[]')}),
      picked as (
        select c.id, c.row_ctid as ctid from allowed a cross join unnest(${arg('queues', 'text[]')}) as q(name)
        cross join lateral svc_jobs_pick(q.name, a.tenant_id, ${capacity()}) c
        order by c.priority desc, c.id
        limit ${capacity()}
      ),
      leased as (
        update svc_jobs j
           set status = 'leased', attempts = j.attempts + 1, lease_id = ${sql.raw(LEASE_ID)},
               lease_secs = ${visibility()}, visible_at = now() + make_interval(secs => ${visibility()}),
               worker_id = (select id from allowed), updated_at = now()
         where j.ctid = any(array(select ctid from picked))
        returning j.id, j.queue, j.kind, j.payload, j.attempts, j.max_attempts, j.lease_id, j.priority, j.tenant_id, j.worker_id
      ),
      numbered as (select l.*, row_number() over () as n from leased l)${leasedEvents}
      select (select queues from w) as worker_queues, (select id from w) as worker_id, (select tenant_id from w) as worker_tenant,
             l.id, l.queue, l.kind, l.payload, l.attempts, l.max_attempts, l.lease_id, l.priority
        from ${ONE_ROW} left join leased l on true`;
  });
  const complete = prepare<CompleteArgs>((arg) => {
    const completedEvents = appended(events.appendFrom('Job', sql`done d`, {
      id: sql`d.event_id`, streamType: JOB, streamId: sql`d.id`, eventType: sql`'JobSucceeded'`,
      data: sql`jsonb_build_object('attempts', d.attempts)`, actorId: sql`null`, tenantId: sql`d.tenant_id`,
    }));
    // Planned from svc_jobs' statistics: a join of the batch with the leased jobs. When those
    // statistics call the table empty, JobStatistics has it analyzed (a probe by id cannot be
    // pinned to the primary key by the statement's shape: see there).
    return sql`
      with w as (${w(arg)}),
      done as (
        update svc_jobs j
           set status = 'succeeded', result = v.result::jsonb, error = null, lease_id = null, worker_id = null,
               visible_at = now(), updated_at = now()
          from unnest(${arg('ids', 'text[]')}, ${arg('leaseIds', 'text[]')}, ${arg('results', 'text[]')}, ${arg('eventIds', 'text[]')})
            as v(id, lease_id, result, event_id)
         where j.id = v.id and j.lease_id = v.lease_id and j.status = 'leased' and exists (select 1 from w)
        returning j.id, j.tenant_id, j.attempts, j.queue, v.lease_id, v.event_id,
                  (extract(epoch from clock_timestamp()) * 1000)::float8 as now_ms
      )${completedEvents}
      select (select count(*) from w)::int as worker, d.id, d.queue, d.lease_id, d.now_ms
        from ${ONE_ROW} left join done d on true`;
  });
  const extend = prepare<ExtendArgs>((arg) => sql`
      with w as (${w(arg)}),
      extended as (
        update svc_jobs
           set lease_secs = coalesce(${arg('visibilitySecs', 'int')}, lease_secs),
               visible_at = now() + make_interval(secs => coalesce(${arg('visibilitySecs', 'int')}, lease_secs)),
               updated_at = now()
         where id = ${arg('id', 'text')} and lease_id = ${arg('leaseId', 'text')} and status = 'leased' and exists (select 1 from w)
        returning true as held, tenant_id
      )
      select (select count(*) from w)::int as worker, e.held, e.tenant_id from ${ONE_ROW} left join extended e on true`);
  const fail = prepare<FailArgs>((arg) => {
    const retry = () => sql`${arg('retryable', 'boolean')} and attempts < max_attempts`;
    const jitter = () => arg('jitter', 'double precision');
    const error = () => arg('error', 'text');
    const failedEvents = appended(events.appendFrom('Job', sql`failed f`, {
      id: arg('eventId', 'text'), streamType: JOB, streamId: sql`f.id`,
      eventType: sql`case when f.status = 'queued' then 'JobRetryScheduled' else 'JobDead' end`,
      data: sql`case when f.status = 'queued'
             then jsonb_build_object('attempts', f.attempts, 'error', ${error()}, 'delaySecs', f.delay_secs)
             else jsonb_build_object('attempts', f.attempts, 'error', ${error()}) end`,
      actorId: sql`null`, tenantId: sql`f.tenant_id`,
    }));
    return sql`
      with w as (${w(arg)}),
      failed as (
        update svc_jobs
           set status = case when ${retry()} then 'queued' else 'dead' end,
               visible_at = case when ${retry()}
                 then now() + make_interval(secs => svc_job_backoff_secs(attempts, ${jitter()}))
                 else now() end,
               error = ${error()}, lease_id = null, worker_id = null, updated_at = now()
         where id = ${arg('id', 'text')} and lease_id = ${arg('leaseId', 'text')} and status = 'leased' and exists (select 1 from w)
        returning id, status, attempts, tenant_id, svc_job_backoff_secs(attempts, ${jitter()}) as delay_secs
      )${failedEvents}
      select (select count(*) from w)::int as worker, f.status, f.delay_secs from ${ONE_ROW} left join failed f on true`;
  });
  return { lease, complete, extend, fail };
}

/** `check`: a job id and lease id (both null: the token alone). Reads, never locks. */
const CHECK = prepare<{ who: string; id: string | null; leaseId: string | null }>((arg) => sql`
  select w.id, w.queues, w.tenant_id,
         exists (select 1 from svc_jobs where id = ${arg('id', 'text')} and lease_id = ${arg('leaseId', 'text')} and status = 'leased') as held
    from ${ONE_ROW} left join (${CALLERS.token(arg)}) w on true`);

/** One row per leased job (or one with a null id when none), each carrying the caller's row. */
interface LeaseRow extends Omit<LeasedRow, 'id' | 'tenant_id'> {
  worker_queues: string[] | null;
  worker_id: string | null;
  worker_tenant: string | null;
  id: string | null;
}

/** A statement lost a version race of `appendFrom` this many times in a row: its error stands. */
const MAX_RACES = 3;

/**
 * The statements for one kind of caller; `who` is its identity (token hash or worker id). Outside a
 * transaction, a statement that lost a version race on a Job stream (see
 * `isVersionRace`) changed nothing and runs again, on a fresh snapshot.
 */
function planeFor(db: Db, events: EventStore, prepared: boolean, caller: CallerKind) {
  const texts = workerStatementTexts(events, caller);
  const statistics = jobStatistics(db);
  const run = async <T, K extends keyof Built>(name: K, args: Parameters<Built[K]['values']>[0], on: Db | Tx = db): Promise<T[]> => {
    const { text } = texts[name];
    const values = (texts[name].values as (a: typeof args) => unknown[])(args);
    const statement = prepared ? { name: `svc_jobs_${name}${caller === 'token' ? '' : `_${caller}`}`, text, values } : { text, values };
    for (let races = 1; ; races++) {
      try {
        return await on.any<T>(statement);
      } catch (error) {
        if (on !== db || races >= MAX_RACES || !isVersionRace(error)) throw error;
      }
    }
  };
  return {
    async lease(who: string, call: LeaseCall): Promise<LeaseOutcome> {
      const eventIds = Array.from({ length: call.capacity }, () => newId());
      const rows = await run<LeaseRow, 'lease'>('lease', {
        who, queues: call.queues, capacity: call.capacity, visibilitySecs: call.visibilitySecs, eventIds,
      });
      const [first] = rows;
      if (!first.worker_queues) return { worker: null };
      const leased = rows.filter((row) => row.id !== null);
      if (leased.length > 0) {
        events.committed();
        statistics.leased(leased.length);
      }
      // UPDATE ... RETURNING has no order: restore the lease order for the worker.
      leased.sort((a, b) => b.priority - a.priority || (a.id! < b.id! ? -1 : 1));
      return {
        worker: { id: first.worker_id!, queues: first.worker_queues, tenantId: first.worker_tenant },
        jobs: leased.map((row) => ({
          id: row.id!, queue: row.queue, kind: row.kind, payload: row.payload,
          attempts: row.attempts, maxAttempts: row.max_attempts, leaseId: row.lease_id,
        })),
      };
    },
    /** In transaction `on` when given: the completion commits with the caller's own change, or neither does. */
    async complete(who: string, items: readonly CompleteItem[], on: Db | Tx = db): Promise<CompleteOutcome> {
      // Rows are locked in id order, so two overlapping batches cannot deadlock.
      const sorted = [...items].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const rows = await run<{ worker: number; id: string | null; queue: string; lease_id: string; now_ms: number }, 'complete'>('complete', {
        who,
        ids: sorted.map((item) => item.id),
        leaseIds: sorted.map((item) => item.leaseId),
        results: sorted.map((item) => (item.result === undefined ? null : JSON.stringify(item.result))),
        eventIds: sorted.map(() => newId()),
      }, on);
      const done = rows.filter((row) => row.id !== null);
      // In the caller's transaction, its commit is still to come: the caller tells the feed.
      if (done.length > 0 && on === db) events.committed();
      const completed = new Set(done.map((row) => row.id));
      const latencyById = done.flatMap((row): Array<[string, LeaseLatency]> => {
        const leasedAt = leasedAtMs(row.lease_id);
        return leasedAt === null ? [] : [[row.id!, { queue: row.queue, seconds: (row.now_ms - leasedAt) / 1000 }]];
      });
      return {
        worker: rows[0].worker > 0,
        completed: items.filter((item) => completed.has(item.id)).map((item) => item.id),
        stale: items.filter((item) => !completed.has(item.id)).map((item) => item.id),
        leaseLatencies: latencyById.map(([, latency]) => latency),
        latencyById,
      };
    },
    async extend(who: string, id: string, leaseId: string, visibilitySecs: number | null): Promise<Extended> {
      const [row] = await run<{ worker: number; held: boolean | null; tenant_id: string | null }, 'extend'>('extend', { who, id, leaseId, visibilitySecs });
      if (row.worker === 0) return 'unauthorized';
      return row.held ? { tenantId: row.tenant_id } : null;
    },
    async fail(who: string, id: string, leaseId: string, error: string, retryable: boolean): Promise<Failed> {
      const [row] = await run<{ worker: number; status: 'queued' | 'dead' | null; delay_secs: number }, 'fail'>('fail', {
        who, id, leaseId, retryable, error, jitter: retryJitter(), eventId: newId(),
      });
      if (row.worker === 0) return 'unauthorized';
      if (row.status === null) return null;
      events.committed();
      return row.status === 'queued' ? { outcome: 'retry', delaySecs: row.delay_secs } : { outcome: 'dead' };
    },
  };
}

/** The worker plane of remote workers: the caller is a worker token, given by its SHA-256. */
export function workerStatements(db: Db, events: EventStore, prepared: boolean): WorkerStatements {
  const statements = planeFor(db, events, prepared, 'token');
  return {
    lease: statements.lease,
    complete: (tokenHash, items) => statements.complete(tokenHash, items),
    extend: statements.extend,
    fail: statements.fail,
    async check(tokenHash, lease) {
      const { text } = CHECK;
      const values = CHECK.values({ who: tokenHash, id: lease?.id ?? null, leaseId: lease?.leaseId ?? null });
      const [row] = await db.any<{ id: string | null; queues: string[] | null; tenant_id: string | null; held: boolean }>(
        prepared ? { name: 'svc_jobs_check', text, values } : { text, values });
      return { worker: row.queues && { id: row.id!, queues: row.queues, tenantId: row.tenant_id }, held: row.held };
    },
  };
}

/**
 * The same statements for the runtime's own queues, in process and without a
 * token (`InternalQueue`): the caller is `workerId` (any queue, any tenant).
 */
export function internalStatements(db: Db, events: EventStore, prepared: boolean) {
  const statements = planeFor(db, events, prepared, 'internal');
  return {
    async lease(queue: string, capacity: number, visibilitySecs: number, workerId: string): Promise<LeasedJob[]> {
      const outcome = await statements.lease(workerId, { queues: [queue], capacity, visibilitySecs });
      return outcome.worker ? outcome.jobs : [];
    },
    extend: async (id: string, leaseId: string, visibilitySecs: number) =>
      (await statements.extend('', id, leaseId, visibilitySecs)) !== null,
    completeIn: async (t: Tx, id: string, leaseId: string, result?: unknown) =>
      (await statements.complete('', [{ id, leaseId, result }], t)).completed.length > 0,
    fail: async (id: string, leaseId: string, error: string): Promise<FailOutcome | null> => {
      const outcome = await statements.fail('', id, leaseId, error, true);
      return outcome === 'unauthorized' ? null : outcome;
    },
  };
}

/** How often at most the plane reads svc_jobs' statistics (one row of pg_class). */
const STATISTICS_CHECK_MS = 1_000;

/**
 * Statistics that call svc_jobs empty, repaired. A queue drained, vacuumed and
 * then filled in one burst (the bench's drains; a deployment after a quiet
 * night whose retention sweep emptied the table) leaves `reltuples` 0 with the
 * table's pages still allocated, and Postgres then plans for zero rows a page
 * until the next analyze: every index costs the same. The batched complete
 * (`update ... from unnest(...)`) was then one pass over every job of the
 * table by its primary key, per batch (test/jobs/lease-plan.integration.test.ts),
 * and the bench's profile caught it as a nested loop forming the batch's rows
 * once per candidate pair (docs/performance.md). No shape of that statement
 * avoids it: under those statistics a probe by `id` through
 * svc_jobs_tenant_status or svc_jobs_tenant_recent (`id` a later column, a
 * walk) costs exactly what the primary key's does, ties go to the newer index,
 * and a probe per item forced by a lateral join also made the common case pay
 * twice (measured). So the plane compares what it leases with what the
 * statistics say: when, since its previous look (at most one a second, one row
 * of pg_class), it leased more jobs than `reltuples` counts in the whole table,
 * it analyzes svc_jobs (a sample, tens of ms; the new statistics invalidate
 * the plans prepared on every connection). The lease's pick does not wait for
 * it: it walks the ready index whatever the statistics say (0007_pick.sql).
 */
export class JobStatistics {
  private seen = 0;
  private nextCheck = 0;
  private running: Promise<void> | null = null;

  constructor(private readonly db: Db, private readonly checkEveryMs = STATISTICS_CHECK_MS) {}

  /** `n` jobs were just leased. */
  leased(n: number): void {
    this.seen += n;
    if (this.running || Date.now() < this.nextCheck) return;
    this.running = this.check().finally(() => {
      this.running = null;
      this.nextCheck = Date.now() + this.checkEveryMs;
    });
  }

  /** Resolves when no look (and no analyze it started) is in flight. */
  async settled(): Promise<void> {
    await this.running;
  }

  private async check(): Promise<void> {
    const seen = this.seen;
    this.seen = 0;
    try {
      const [row] = await this.db.any<{ reltuples: number }>(RELTUPLES);
      if (!row || row.reltuples >= seen) return;
      // Another session analyzing svc_jobs (autovacuum, another instance) holds the lock: leave it to them.
      await this.db.tx('svc-jobs-analyze', async (t) => {
        await t.none(ANALYZE_LOCK_TIMEOUT);
        await t.none(ANALYZE);
      });
    } catch {
      // The statistics stay as they were: the next look, a second later, tries again.
      this.seen += seen;
    }
  }
}

const RELTUPLES = compile(sql`select reltuples::float8 as reltuples from pg_class where oid = 'svc_jobs'::regclass`);
const ANALYZE_LOCK_TIMEOUT = compile(sql`set local lock_timeout = 1000`);
const ANALYZE = compile(sql`analyze svc_jobs`);

const statisticsByDb = new WeakMap<Db, JobStatistics>();

/** The one JobStatistics of a database handle (the token and internal planes share it). */
export function jobStatistics(db: Db): JobStatistics {
  let statistics = statisticsByDb.get(db);
  if (!statistics) {
    statistics = new JobStatistics(db);
    statisticsByDb.set(db, statistics);
  }
  return statistics;
}

/** One acknowledged job, as the per-job route needs it. */
export interface CompletedOne {
  readonly worker: boolean;
  readonly completed: boolean;
  readonly leaseLatency: LeaseLatency | null;
}

interface Waiting {
  readonly tokenHash: string;
  readonly item: CompleteItem;
  resolve(outcome: CompletedOne): void;
  reject(error: unknown): void;
}

/**
 * Per-job completes, combined: calls that arrive while the statements in
 * flight run are sent together as one statement (the batch form of
 * `complete`), so under load a round trip acknowledges many jobs, as the
 * SDK's batched acks do, while each caller still gets its own answer. At
 * most `maxInFlight` statements run at once; a batch never holds one job
 * twice (two calls for one job must race as before: one wins, one is 409),
 * nor two tokens (each statement checks one).
 */
export class CompleteCombiner {
  private waiting: Waiting[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(private readonly statements: WorkerStatements, private readonly maxInFlight = 2) {}

  complete(tokenHash: string, item: CompleteItem): Promise<CompletedOne> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ tokenHash, item, resolve, reject });
      this.schedule();
    });
  }

  /** Flushes after the current I/O phase, so that calls parsed together go together. */
  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.take();
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    }
  }

  /** The longest run of waiting calls with the first one's token and distinct jobs; the rest keep their order. */
  private take(): Waiting[] {
    const tokenHash = this.waiting[0].tokenHash;
    const ids = new Set<string>();
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    for (const call of this.waiting) {
      if (call.tokenHash === tokenHash && !ids.has(call.item.id) && batch.length < MAX_COMBINED) {
        ids.add(call.item.id);
        batch.push(call);
      } else {
        rest.push(call);
      }
    }
    this.waiting = rest;
    return batch;
  }

  private async send(batch: Waiting[]): Promise<void> {
    try {
      const outcome = await this.statements.complete(batch[0].tokenHash, batch.map((call) => call.item));
      const completed = new Set(outcome.completed);
      const latencies = new Map(outcome.latencyById);
      for (const call of batch) {
        call.resolve({ worker: outcome.worker, completed: completed.has(call.item.id), leaseLatency: latencies.get(call.item.id) ?? null });
      }
    } catch (error) {
      for (const call of batch) call.reject(error);
    }
  }
}

/**
 * Concurrent leases, combined: lease calls of one token for the same queues
 * and lease length that arrive while that key's statements run are sent
 * together as ONE lease statement for their summed capacity (at most
 * MAX_COMBINED_LEASE jobs), and its jobs are handed out in lease order, each
 * caller getting at most its own capacity (the specification's 1..100 per
 * request is unchanged). At most `maxInFlight` (default one) lease statements
 * run at once per key: a second one would walk past the rows the first has
 * locked. Measured on the SDK drain (docs/performance.md): sixteen
 * concurrent leases of one queue spent most of Postgres' CPU walking the
 * ready index past rows the others had locked or just leased; combined, a
 * worker's four leases are one statement, and one index walk serves them.
 */
export class LeaseCombiner {
  private readonly groups = new Map<string, LeaseGroup>();

  constructor(private readonly statements: WorkerStatements, private readonly maxInFlight = 1) {}

  lease(tokenHash: string, call: LeaseCall): Promise<LeaseOutcome> {
    const key = `${tokenHash}\u0000${call.visibilitySecs}\u0000${call.queues.join('\u0000')}`;
    let group = this.groups.get(key);
    if (!group) {
      group = { key, tokenHash, queues: call.queues, visibilitySecs: call.visibilitySecs, waiting: [], inFlight: 0, scheduled: false };
      this.groups.set(key, group);
    }
    const joined = group;
    return new Promise((resolve, reject) => {
      joined.waiting.push({ capacity: call.capacity, resolve, reject });
      this.schedule(joined);
    });
  }

  /** Flushes after the current I/O phase, so that calls parsed together go together. */
  private schedule(group: LeaseGroup): void {
    if (group.scheduled || group.inFlight >= this.maxInFlight) return;
    if (group.waiting.length === 0) {
      if (group.inFlight === 0 && this.groups.get(group.key) === group) this.groups.delete(group.key);
      return;
    }
    group.scheduled = true;
    setImmediate(() => {
      group.scheduled = false;
      this.flush(group);
    });
  }

  private flush(group: LeaseGroup): void {
    while (group.inFlight < this.maxInFlight && group.waiting.length > 0) {
      let total = 0;
      let n = 0;
      // The first call always goes; the next ones while their sum fits.
      while (n < group.waiting.length && (n === 0 || total + group.waiting[n].capacity <= MAX_COMBINED_LEASE)) total += group.waiting[n++].capacity;
      const batch = group.waiting.splice(0, n);
      group.inFlight++;
      void this.send(group, batch, total).finally(() => {
        group.inFlight--;
        this.schedule(group);
      });
    }
  }

  private async send(group: LeaseGroup, batch: readonly WaitingLease[], capacity: number): Promise<void> {
    try {
      const outcome = await this.statements.lease(group.tokenHash, { queues: group.queues, capacity, visibilitySecs: group.visibilitySecs });
      if (!outcome.worker) {
        for (const call of batch) call.resolve(outcome);
        return;
      }
      let at = 0;
      for (const call of batch) {
        call.resolve({ worker: outcome.worker, jobs: outcome.jobs.slice(at, at + call.capacity) });
        at += call.capacity;
      }
    } catch (error) {
      for (const call of batch) call.reject(error);
    }
  }
}

interface WaitingLease {
  readonly capacity: number;
  resolve(outcome: LeaseOutcome): void;
  reject(error: unknown): void;
}

interface LeaseGroup {
  readonly key: string;
  readonly tokenHash: string;
  readonly queues: readonly string[];
  readonly visibilitySecs: number;
  waiting: WaitingLease[];
  inFlight: number;
  scheduled: boolean;
}

/** Jobs one combined lease statement takes at most (the calls' capacities summed). */
const MAX_COMBINED_LEASE = 500;

/** Calls combined into one statement at most (the batch route's own limit is 1,000). */
const MAX_COMBINED = 100;

/**
 * A lost version race of `appendFrom` (the unique constraint): the statement
 * numbered a Job event from a snapshot older than a concurrent append to the
 * same stream. It changed nothing; run again, it sees that append.
 */
function isVersionRace(error: unknown): boolean {
  const e = error as { code?: string; constraint?: string };
  return e?.code === '23505' && e.constraint === 'svc_events_stream_version';
}
