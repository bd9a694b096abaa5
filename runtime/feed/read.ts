/**
 * The feed's one read: committed changes after a position, in (tx, seq)
 * order, from the event log and from svc_changes (history `off`), only below
 * the horizon (ADR 010): every transaction with an id below it has ended, so
 * no row can later appear below a position once the feed has passed it.
 */
import { fixed, type Db, type Tx } from '../db/index.ts';
import { prepare, type Prepared } from '../sql/prepare.ts';
import { sql } from '../sql/index.ts';
import { tenantOf } from '../tenancy/index.ts';

/** Every change at or before a position has been read. `tx` is an xid8 in decimal text. */
export interface FeedPosition {
  readonly tx: string;
  readonly seq: number;
}

/** The start of the log: before every change. */
export const ORIGIN: FeedPosition = { tx: '0', seq: 0 };

export interface FeedChange {
  readonly position: FeedPosition;
  /** Tenant mode (ADR 025 decision 4): the change's place in its tenant's feed. */
  readonly tenantSeq?: number;
  readonly eventId: string;
  readonly eventType: string;
  /** The stream type: a model name, or `Job`. */
  readonly modelName: string;
  readonly recordId: string;
  readonly tenantId: string | null;
  /** Stream version; 0 when the history policy did not keep the event. */
  readonly version: number;
  readonly actorId: string | null;
  readonly occurredAt: string;
  /** The event's data when read `withData` (null under history `off`). */
  readonly data?: unknown;
}

export interface ChangePage {
  readonly changes: FeedChange[];
  /** Where a reader stands after this page: the last change, or the horizon when the page is not full. */
  readonly end: FeedPosition;
  /** Milliseconds between the oldest change of the page and the read (feed lag), 0 when empty. */
  readonly lagMs: number;
}

/**
 * What a subscriber or consumer wants to read: some streams (model names,
 * `Job`, ...), optionally only some event types of them. Absent streams:
 * everything. The reader reads only the union of what is wanted (ADR 010),
 * so changes nobody waits for are never shipped to the process.
 */
export interface Interest {
  readonly streams?: readonly string[];
  /** Only these event types of `streams` (default: all of them). */
  readonly eventTypes?: readonly string[];
}

/** A read's filter: whole streams, and `stream:eventType` pairs. Null reads everything. */
export interface FeedFilter {
  readonly streams: readonly string[];
  readonly events: readonly string[];
}

/** The union of interests as one filter; null when any of them wants everything. */
export function filterOf(interests: Iterable<Interest>): FeedFilter | null {
  const streams = new Set<string>();
  const events = new Set<string>();
  for (const interest of interests) {
    if (!interest.streams) return null;
    for (const stream of interest.streams) {
      if (interest.eventTypes) for (const type of interest.eventTypes) events.add(`${stream}:${type}`);
      else streams.add(stream);
    }
  }
  const partial = [...events].filter((pair) => !streams.has(pair.slice(0, pair.indexOf(':'))));
  return { streams: [...streams].sort(), events: partial.sort() };
}

/** Does a read made with `used` hold everything `wanted` asks for? */
export function covers(used: FeedFilter | null, wanted: FeedFilter | null): boolean {
  if (used === null) return true;
  if (wanted === null) return false;
  const streams = new Set(used.streams);
  const events = new Set(used.events);
  return wanted.streams.every((stream) => streams.has(stream))
    && wanted.events.every((pair) => events.has(pair) || streams.has(pair.slice(0, pair.indexOf(':'))));
}

/** Does `change` belong to what `interest` wants? */
export function wants(interest: Interest, change: FeedChange): boolean {
  if (!interest.streams) return true;
  return interest.streams.includes(change.modelName) && (!interest.eventTypes || interest.eventTypes.includes(change.eventType));
}

export function compare(a: FeedPosition, b: FeedPosition): number {
  const tx = BigInt(a.tx) - BigInt(b.tx);
  if (tx !== 0n) return tx < 0n ? -1 : 1;
  return a.seq - b.seq;
}

export const later = (a: FeedPosition, b: FeedPosition): FeedPosition => (compare(a, b) >= 0 ? a : b);

const columns = (alias: string, withData: boolean, event: boolean) => [
  `${alias}.tx::text as tx`, `${alias}.seq`, `${alias}.id`, `${alias}.stream_type`, `${alias}.stream_id`,
  `${alias}.event_type`, `${alias}.tenant_id`, `${alias}.occurred_at`,
  event ? `${alias}.version` : '0 as version', event ? `${alias}.actor_id` : 'null::text as actor_id',
  ...(withData ? [event ? `${alias}.data` : 'null::jsonb as data'] : []),
].join(', ');

/**
 * The horizon, in the statement's own snapshot: `pg_snapshot_xmin`, except
 * that a running transaction of ANOTHER database does not hold it back (xids
 * are cluster-wide, but only this database's transactions write its log). A
 * running xid is skipped only when pg_stat_activity shows it in another
 * database; one that is unknown (it ended meanwhile, a prepared transaction,
 * a column hidden by permissions) counts as ours. No running xid of ours:
 * the snapshot's xmax, the first id not yet assigned.
 */
export const HORIZON_SQL = `(select least(pg_snapshot_xmax(s), (
    select min(x) from pg_snapshot_xip(s) as x
     where not exists (select 1 from pg_stat_activity a where a.backend_xid = xid(x) and a.datname <> current_database())))
  from pg_current_snapshot() as s)`;

/** A page's values: the position after which it reads, its size, and (filtered) the streams and events it names. */
interface PageArgs {
  readonly tx: string;
  readonly seq: number;
  readonly limit: number;
  readonly streams?: readonly string[];
  readonly events?: readonly string[];
}

/** The page statement of one variant, compiled once at load; a call binds its PageArgs. */
function pageSql(withData: boolean, filtered: boolean): Prepared<PageArgs> {
  return prepare<PageArgs>((arg) => {
    const filter = filtered
      ? sql` and (x.stream_type = any(${arg('streams', 'text[]')}) or (x.stream_type || ':' || x.event_type) = any(${arg('events', 'text[]')}))`
      : sql.empty;
    const part = (table: string, event: boolean) => sql`(select ${sql.raw(columns('x', withData, event))} from ${sql.ident(table)} x
      where (x.tx, x.seq) > (${arg('tx')}::xid8, ${arg('seq', 'bigint')}) and x.tx < h.horizon${filter} order by x.tx, x.seq limit ${arg('limit')})`;
    return sql`with h as materialized (select ${sql.raw(HORIZON_SQL)} as horizon)
    select h.horizon::text as horizon, c.*,
           (extract(epoch from clock_timestamp() - c.occurred_at) * 1000)::float8 as age_ms
      from h left join lateral (
        select * from (${part('svc_events', true)} union all ${part('svc_changes', false)}) u
         order by u.tx::xid8, u.seq limit ${arg('limit')}
      ) c on true`;
  });
}

const SQL = {
  plain: pageSql(false, false), withData: pageSql(true, false),
  plainFiltered: pageSql(false, true), withDataFiltered: pageSql(true, true),
};

/** The position of an event or change (compiled once at load). */
const POSITION_OF = prepare<{ eventId: string }>((arg) => sql`
  select tx::text as tx, seq, tenant_id from svc_events where id = ${arg('eventId')}
   union all select tx::text as tx, seq, tenant_id from svc_changes where id = ${arg('eventId')} limit 1`);

/**
 * Reads run many times a second under a write load; planning the page
 * statement costs four times its execution (0.4 vs 0.1 ms measured), so on a
 * server each variant is prepared once per connection (`prepared`).
 */
const NAMES: Record<keyof typeof SQL, string> = {
  plain: 'svc_feed_page', withData: 'svc_feed_page_data',
  plainFiltered: 'svc_feed_page_filtered', withDataFiltered: 'svc_feed_page_data_filtered',
};

/**
 * Reads up to `limit` changes after `after` on `runner` (a pool, or a
 * consumer's transaction), only those `filter` names when given, with a
 * prepared statement when `prepared`. The page's end is a position every
 * change the filter names at or before it was read.
 */
export async function readPage(
  runner: Db | Tx, after: FeedPosition, limit: number, withData = false, filter: FeedFilter | null = null, prepared = false,
): Promise<ChangePage> {
  const variant = filter ? (withData ? 'withDataFiltered' : 'plainFiltered') : (withData ? 'withData' : 'plain');
  const statement = SQL[variant];
  const values = statement.values(filter
    ? { tx: after.tx, seq: after.seq, limit, streams: filter.streams, events: filter.events }
    : { tx: after.tx, seq: after.seq, limit });
  const rows = await runner.any(fixed(prepared, NAMES[variant], statement.text, values));
  const changes: FeedChange[] = [];
  for (const row of rows) if (row.id !== null) changes.push(toChange(row, withData));
  const horizon = rows[0]?.horizon as string | undefined;
  const end = changes.length === limit || horizon === undefined
    ? changes.at(-1)?.position ?? after
    : later(after, { tx: horizon, seq: 0 });
  const lagMs = changes.length > 0 ? Math.max(0, Number(rows.find((r) => r.id !== null)!.age_ms)) : 0;
  return { changes, end, lagMs };
}

/** The position "now": every change committed before it lies at or before it. */
export async function currentPosition(runner: Db | Tx): Promise<FeedPosition> {
  const row = await runner.one<{ tx: string }>(`select ${HORIZON_SQL}::text as tx`);
  return { tx: row.tx, seq: 0 };
}

/** The position of an event (or of a change written under history `off`), with its tenant; null when unknown. */
export async function positionOf(runner: Db | Tx, eventId: string): Promise<{ position: FeedPosition; tenantId: string | null } | null> {
  const row = await runner.oneOrNone<{ tx: string; seq: number; tenant_id: string | null }>(
    POSITION_OF.text, POSITION_OF.values({ eventId }),
  );
  return row ? { position: { tx: row.tx, seq: Number(row.seq) }, tenantId: tenantOf(row.tenant_id) } : null;
}

function toChange(row: Record<string, any>, withData: boolean): FeedChange {
  return {
    position: { tx: row.tx, seq: Number(row.seq) },
    eventId: row.id,
    eventType: row.event_type,
    modelName: row.stream_type,
    recordId: row.stream_id,
    tenantId: tenantOf(row.tenant_id),
    version: row.version,
    actorId: row.actor_id,
    occurredAt: row.occurred_at,
    ...(withData ? { data: row.data } : {}),
  };
}
