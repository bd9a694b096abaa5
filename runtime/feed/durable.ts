/**
 * Durable consumers: code that must see every change exactly once (projection
 * refresh today; audit, actions and workflows later). Each has a named cursor
 * in svc_feed_cursors. A batch is read, handled and the cursor advanced in
 * ONE transaction: a crash before the commit replays the batch, after it the
 * batch is done. The transaction first takes the consumer's advisory lock
 * (try, not wait), so among instances one applies a batch at a time and the
 * others skip. Not a row lock: that would give the transaction an id at once,
 * and every open transaction id holds the whole feed back (ADR 010); this one
 * gets an id only when the handler first writes.
 *
 * A handler that throws rolls the batch back; it is retried with backoff
 * (the consumer stops at that change rather than skip it: fix and it resumes).
 * The handler must run every query on `t`: on the embedded database the
 * transaction holds the only connection.
 */
import { fixed, type Db, type Tx } from '../db/index.ts';
import { CONSUMER_LOCK_CLASS } from '../db/locks.ts';
import { prepare } from '../sql/prepare.ts';
import { compile, sql } from '../sql/index.ts';
import type { Logger } from '../log/index.ts';
import { filterOf, HORIZON_SQL, readPage, type FeedChange, type FeedFilter, type FeedPosition } from './read.ts';
import { readTenantPage } from './tenant.ts';
import type { FeedCursorMode } from '../events/index.ts';

export interface DurableConsumer {
  /** Unique and stable: it names the cursor row. */
  readonly name: string;
  /** Stream types (model names, `Job`) to receive; every stream when absent. */
  readonly streams?: readonly string[];
  /** Only these event types of `streams` (default: all); nothing else is read. */
  readonly eventTypes?: readonly string[];
  /** Changes per transaction (default 500). */
  readonly batchSize?: number;
  /** Also read each event's data (default false). */
  readonly withData?: boolean;
  /** Applies a batch in `t`; the cursor advances in `t` too. Never called with an empty batch. */
  handle(changes: readonly FeedChange[], t: Tx): Promise<void>;
}

export interface ConsumerStats {
  readonly name: string;
  readonly handled: number;
  readonly failures: number;
  readonly lastHandledAt: string | null;
  /** True while a batch is read or applied by this instance. */
  readonly busy: boolean;
}

export interface ConsumerHandle {
  /** Runs the consumer now; resolves when everything committed before the call is handled (or another instance holds it). */
  drain(): Promise<void>;
  stats(): ConsumerStats;
  stop(): Promise<void>;
}

/** Where a new cursor starts: at the log's origin, or at the current position (changes from now on). */
export type ConsumerStart = 'origin' | 'now';

const MAX_BACKOFF_MS = 30_000;
/** Another instance holds the consumer: look again after this long, in case it stopped mid-batch. */
const BUSY_RETRY_MS = 250;
/**
 * At most one run per this interval: under a stream of commits a consumer
 * takes bigger batches instead of one transaction per reader page.
 */
const MIN_GAP_MS = 20;

/**
 * Creates the cursor row if absent (an existing cursor keeps its position).
 * Tenant mode: a new consumer started 'now', and one that ran in global mode
 * before (its global cursor moved past the origin) the first time it runs in
 * tenant mode, also gets one row per tenant at its current head
 * (svc_feed_tenant_cursors); a tenant without a row is read from its first
 * change.
 */
export async function ensureCursor(db: Db, name: string, start: ConsumerStart, mode: FeedCursorMode = 'global'): Promise<void> {
  const created = sql`insert into svc_feed_cursors (name, tx, seq)
     values (${sql.value(name)}, case when ${sql.value(start === 'origin', 'boolean')} then '0'::xid8 else ${sql.raw(HORIZON_SQL)} end,
             ${sql.value(mode === 'tenant' ? CREATED_IN_TENANT_MODE : 0, 'bigint')})
     on conflict (name) do nothing`;
  if (mode === 'global') {
    await db.none(compile(created));
    return;
  }
  // Tenant mode: a new consumer started 'now', or one that ran in global mode (it read past the
  // origin) and has no tenant row yet, starts each tenant at its head: nothing is replayed.
  await db.none(compile(sql`with created as (${created} returning name),
    switched as (
      select f.name from svc_feed_cursors f
       where f.name = ${sql.value(name)} and f.tx <> '0'::xid8 and f.seq <> ${sql.value(CREATED_IN_TENANT_MODE, 'bigint')}
         and not exists (select 1 from svc_feed_tenant_cursors c where c.consumer = f.name)),
    starting as (select name from created where ${sql.value(start === 'now', 'boolean')} union select name from switched)
    insert into svc_feed_tenant_cursors (consumer, tenant_id, position)
    select s.name, h.tenant_id, h.last_seq from starting s cross join svc_tenant_heads h
    on conflict (consumer, tenant_id) do nothing`));
}

/**
 * The global cursor's `seq` of a consumer created in tenant mode: its tenant
 * rows are its whole position (none yet: nothing read). Read as a global
 * position it equals `(tx, 0)`: no row has a negative seq.
 */
const CREATED_IN_TENANT_MODE = -1;

/** Tenant mode: tenants whose head lies beyond the consumer's cursor row there, at most this many per step. */
const TENANTS_PER_STEP = 100;

/**
 * Tenant mode's step: in the consumer's transaction (its lock taken as in
 * global mode), the heads beyond its per-tenant cursor rows, a page of each
 * (up to the batch size in all), one handler call, the rows advanced.
 */
async function tenantStep(t: Tx, consumer: DurableConsumer, filter: FeedFilter | null): Promise<Step> {
  const behind = await t.any<{ tenant_id: string; last_seq: string; position: string }>(compile(sql`
    select h.tenant_id, h.last_seq, coalesce(c.position, 0) as position
      from svc_tenant_heads h
      left join svc_feed_tenant_cursors c on c.consumer = ${sql.value(consumer.name, 'text')} and c.tenant_id = h.tenant_id
     where h.last_seq > coalesce(c.position, 0)
     order by h.tenant_id limit ${sql.value(TENANTS_PER_STEP + 1, 'int')}`));
  const limit = consumer.batchSize ?? 500;
  const changes: FeedChange[] = [];
  const moved: Array<[string, number]> = [];
  let more = behind.length > TENANTS_PER_STEP;
  for (const row of behind.slice(0, TENANTS_PER_STEP)) {
    if (changes.length >= limit) {
      more = true;
      break;
    }
    const page = await readTenantPage(t, row.tenant_id, Number(row.position), Number(row.last_seq),
      limit - changes.length, consumer.withData ?? false, filter);
    changes.push(...page.changes);
    moved.push([row.tenant_id, page.end]);
    if (page.full && page.end < Number(row.last_seq)) more = true;
  }
  if (changes.length > 0) await consumer.handle(changes, t);
  if (moved.length > 0) {
    await t.none(compile(sql`
      insert into svc_feed_tenant_cursors (consumer, tenant_id, position)
      select ${sql.value(consumer.name, 'text')}, m.tenant_id, m.position
        from unnest(${sql.value(moved.map(([tenant]) => tenant), 'text[]')}, ${sql.value(moved.map(([, seq]) => seq), 'bigint[]')}) as m(tenant_id, position)
      on conflict (consumer, tenant_id) do update set position = excluded.position, updated_at = now()`));
  }
  return { handled: changes.length, more };
}

interface Step {
  readonly handled: number;
  /** The page was full: more changes wait. */
  readonly more: boolean;
}

// Run by every consumer step: compiled once at load, the consumer's values bound per call.
const LOCK_CURSOR = prepare<{ name: string }>((arg) => sql`select tx::text as tx, seq from svc_feed_cursors
  where name = ${arg('name')} and pg_try_advisory_xact_lock(${sql.value(CONSUMER_LOCK_CLASS)}, hashtext(${arg('name')}))`);
const ADVANCE_CURSOR = prepare<{ name: string; tx: string; seq: number }>((arg) => sql`
  update svc_feed_cursors set tx = ${arg('tx')}::xid8, seq = ${arg('seq')}, updated_at = now() where name = ${arg('name')}`);

/** One transaction: lock the consumer, read a page after its cursor, handle it, advance. 'busy' when another instance holds it. */
async function step(db: Db, consumer: DurableConsumer, filter: FeedFilter | null, prepared: boolean, mode: FeedCursorMode): Promise<Step | 'busy'> {
  return db.tx(`svc-feed-${consumer.name}`, async (t) => {
    const cursor = await t.oneOrNone<{ tx: string; seq: string }>(
      fixed(prepared, 'svc_feed_cursor_lock', LOCK_CURSOR.text, LOCK_CURSOR.values({ name: consumer.name })));
    if (!cursor) return 'busy';
    if (mode === 'tenant') return tenantStep(t, consumer, filter);
    const from: FeedPosition = { tx: cursor.tx, seq: Number(cursor.seq) };
    const limit = consumer.batchSize ?? 500;
    // The page holds only what the consumer declared (the filter is in the statement).
    const page = await readPage(t, from, limit, consumer.withData ?? false, filter, prepared);
    const wanted = page.changes;
    if (wanted.length > 0) await consumer.handle(wanted, t);
    if (page.end.tx !== from.tx || page.end.seq !== from.seq) {
      await t.none(fixed(prepared, 'svc_feed_cursor_advance', ADVANCE_CURSOR.text,
        ADVANCE_CURSOR.values({ name: consumer.name, tx: page.end.tx, seq: page.end.seq })));
    }
    return { handled: wanted.length, more: page.changes.length === limit };
  });
}

/**
 * Runs `consumer` whenever `wake()` is called (the feed reader calls it after
 * each page it read), until stopped. Runs are serialised on this instance;
 * its statements are prepared when `prepared`.
 */
export function runConsumer(
  db: Db, consumer: DurableConsumer, log: Logger, prepared = false, mode: FeedCursorMode = 'global',
): ConsumerHandle & { wake(): void } {
  const filter = filterOf([consumer]);
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let backoffMs = 0;
  let retry: NodeJS.Timeout | null = null;
  let later: NodeJS.Timeout | null = null;
  let lastRunAt = 0;
  const stats = { handled: 0, failures: 0, lastHandledAt: null as string | null };

  const runAll = async (): Promise<'busy' | 'done'> => {
    for (;;) {
      again = false;
      const result = await step(db, consumer, filter, prepared, mode);
      if (result === 'busy') return 'busy';
      if (result.handled > 0) {
        stats.handled += result.handled;
        stats.lastHandledAt = new Date().toISOString();
      }
      if (!result.more || stopped) return 'done'; // a change announced meanwhile runs it again, after the gap
    }
  };
  const wake = (): void => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    const wait = lastRunAt + MIN_GAP_MS - Date.now();
    if (wait > 0) {
      if (!later) {
        later = setTimeout(() => {
          later = null;
          wake();
        }, wait);
        later.unref();
      }
      return;
    }
    run();
  };
  const retryIn = (ms: number): void => {
    if (retry || stopped) return;
    retry = setTimeout(() => {
      retry = null;
      wake();
    }, ms);
    retry.unref();
  };
  const run = (): void => {
    lastRunAt = Date.now();
    running = runAll()
      .then((outcome) => {
        backoffMs = 0;
        if (outcome === 'busy') retryIn(BUSY_RETRY_MS);
      })
      .catch((err) => {
        stats.failures += 1;
        backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(100, backoffMs * 2));
        log.warn({ err, consumer: consumer.name, retryMs: backoffMs }, 'durable consumer failed: the batch is retried');
        retryIn(backoffMs);
      })
      .finally(() => {
        running = null;
        lastRunAt = Date.now();
        if (again && backoffMs === 0) wake();
      });
  };
  return {
    wake,
    async drain() {
      while (running) await running;
      if (later) clearTimeout(later);
      later = null;
      if (!stopped) run();
      while (running) await running;
    },
    stats: () => ({ name: consumer.name, ...stats, busy: running !== null }),
    async stop() {
      stopped = true;
      if (retry) clearTimeout(retry);
      if (later) clearTimeout(later);
      while (running) await running;
    },
  };
}
