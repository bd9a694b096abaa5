/**
 * The event store: append a change to a stream in the caller's transaction
 * and read a stream's history. The log is also the change feed's outbox
 * (runtime/feed, ADR 010): nothing here notifies inside a transaction; a
 * writer calls `committed()` after its commit to wake the local feed reader.
 *
 * Versions are per stream. The caller must hold the row lock of the record the
 * stream belongs to (it just inserted, updated or deleted it), so appends to
 * one stream are serialised and `max(version) + 1` never repeats; the unique
 * constraint is the backstop.
 */
import { newId } from '../ids.ts';
import type { Db, Tx } from '../db/index.ts';
import { FULL_HISTORY, markGaps, type HistoryOptions } from './history.ts';
import { TenantScope, tenantKey, tenantOf, type ReadScope } from '../tenancy/index.ts';
import { compile, sql, type Sql, type SqlValue } from '../sql/index.ts';
import { nextTenantSeqSql, stampLater, type FeedCursorMode } from './tenant-seq.ts';

export interface NewEvent {
  /** Model name, or `Job` for job transitions. */
  readonly streamType: string;
  readonly streamId: string;
  readonly eventType: string;
  readonly data: unknown;
  readonly actorId: string | null;
  readonly tenantId: string | null;
  /** Chosen by the caller when it must reference the event (an audit entry does); else generated. */
  readonly eventId?: string;
}

export interface StoredEvent {
  readonly eventId: string;
  readonly seq: number;
  readonly streamType: string;
  readonly streamId: string;
  readonly version: number;
  readonly eventType: string;
  readonly data: unknown;
  readonly actorId: string | null;
  readonly tenantId: string | null;
  readonly occurredAt: string;
}

export interface EventStore {
  /** The history policy in force; `keeps(streamType)` is false when events of that stream are not written. */
  readonly policy: HistoryOptions;
  /** The feed position appends write: `tenant` also stamps per-tenant positions (ADR 025 decision 4). */
  readonly cursor: FeedCursorMode;
  keeps(streamType: string): boolean;
  /**
   * Appends in `t`. Under history `off` a model event is not written
   * (version 0): a small row of svc_changes carries the change to the feed.
   */
  append(t: Tx, event: NewEvent): Promise<{ eventId: string; version: number }>;
  /** Appends many events of distinct streams in `t` (chunked). */
  appendMany(t: Tx, events: readonly NewEvent[]): Promise<void>;
  /**
   * The CTE body that appends a new stream's first event (version 1) once per
   * row of `from`, the CTE that creates the stream's row (none when it made
   * no row): a create composes it into its own statement, one round trip,
   * atomic on its own. Without `event.data`, the data is the created row
   * itself (`to_jsonb(from)`). Null when the policy does not keep the
   * stream: the caller then uses `append` in a transaction.
   */
  firstEvent(event: CreatedEvent & { readonly eventId: string }, from: Sql): Sql | null;
  /**
   * `firstEvent` with its columns as SQL expressions over `from`'s rows or
   * placeholders (see `appendFrom`), so that a statement built once serves
   * every call with only its values changing. Null as for `firstEvent`.
   */
  firstEventFrom(streamType: string, from: Sql, columns: EventColumnsSql): Sql | null;
  /**
   * The INSERT (a CTE body) that appends one event per row of `from`, in the
   * statement that changed those rows: `from` names a data-modifying CTE
   * (`update ... returning`) whose rows it locked, so each stream's writers
   * are serialised and the version is the stream's next (the unique
   * constraint is the backstop: a lost race fails the statement, code 23505).
   * `columns` are SQL fragments over `from`'s rows. Null when the policy does not keep `streamType`: the caller
   * then uses `append`/`appendMany` in a transaction.
   */
  appendFrom(streamType: string, from: Sql, columns: EventColumnsSql): Sql | null;
  /** A stream's events, oldest first; only those in `scope` when given (the system reads every scope). */
  history(streamType: string, streamId: string, scope: ReadScope): Promise<StoredEvent[]>;
  /**
   * Tells the local change feed that a transaction which appended has
   * committed (call it after the commit, never inside the transaction). Cheap
   * and in process: other instances find the change by polling the log.
   */
  committed(): void;
  /** Registers the function `committed()` calls (the feed reader's wake-up). */
  onCommitted(listener: () => void): () => void;
}

export interface SqlQuery {
  readonly text: string;
  readonly values: unknown[];
}

/**
 * CTEs another capability folds into a create statement (an action's job, its
 * event): each reads the created row from the CTE `created`, in order, so one
 * may read another's rows; their names must be unique in the statement.
 */
export type CreatedCte = (created: Sql) => readonly NamedCte[];

export interface NamedCte {
  readonly name: Sql;
  readonly body: Sql;
}

/** SQL expressions of an event's columns (see `appendFrom`). */
export interface EventColumnsSql {
  readonly id: Sql | SqlValue;
  readonly streamType: Sql | SqlValue;
  readonly streamId: Sql | SqlValue;
  readonly eventType: Sql | SqlValue;
  /** A jsonb expression. */
  readonly data: Sql | SqlValue;
  readonly actorId: Sql | SqlValue;
  readonly tenantId: Sql | SqlValue;
}

/** A new stream's first event; without `data`, the data is the created row itself. */
export type CreatedEvent = Omit<NewEvent, 'data'> & { readonly data?: unknown };

const MAX_ROWS_PER_INSERT = 1000; // 10 params a row stays far below Postgres' 65,535

export function createEventStore(db: Db, policy: HistoryOptions = FULL_HISTORY, cursor: FeedCursorMode = 'global'): EventStore {
  const keeps = (streamType: string) => policy.policy !== 'off' || !policy.models.has(streamType);
  const wakers = new Set<() => void>();
  // Tenant mode (tenant-seq.ts): a transaction's appends are stamped by its last statement; an
  // appending statement of its own (firstEvent, appendFrom) stamps its rows itself.
  const tenantMode = cursor === 'tenant';
  const stamped = (t: Tx, events: ReadonlyArray<{ eventId: string; tenantId: string | null }>) =>
    (tenantMode ? stampLater(t, events.map((e) => e.eventId), events.map((e) => e.tenantId)) : undefined);
  const seqColumn = tenantMode ? sql`, tenant_seq` : sql.empty;
  const seqValue = (tenantId: Sql | SqlValue) => (tenantMode ? sql`, ${nextTenantSeqSql(sql`${tenantId}`)}` : sql.empty);
  /** A new stream's first event (version 1) per row of `from`; `c.tenantId` is the stored key, never null. */
  const firstInsert = (from: Sql, c: EventColumnsSql) => sql`
    insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id${seqColumn})
    select ${c.id}, ${c.streamType}, ${c.streamId}, 1, ${c.eventType}, ${c.data}, ${c.actorId}, ${c.tenantId}${seqValue(c.tenantId)} from ${from}`;
  const store: EventStore = {
    policy,
    cursor,
    keeps,
    async append(t, event) {
      const eventId = event.eventId ?? newId();
      if (!keeps(event.streamType)) {
        await markGaps(t, [event.streamType], 'policy off');
        await recordChanges(t, [{ ...event, eventId }]);
        await stamped(t, [{ eventId, tenantId: event.tenantId }]);
        return { eventId, version: 0 };
      }
      const [streamType, streamId] = [sql.value(event.streamType, 'text'), sql.value(event.streamId, 'text')];
      const row = await t.one<{ version: number }>(compile(sql`
        insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
        select ${sql.value(eventId, 'text')}, ${streamType}, ${streamId}, coalesce(max(version), 0) + 1,
               ${sql.value(event.eventType, 'text')}, ${sql.value(toJson(event.data), 'jsonb')},
               ${sql.value(event.actorId, 'text')}, ${sql.value(tenantKey(event.tenantId), 'text')}
          from svc_events
         where stream_type = ${streamType} and stream_id = ${streamId} and ${TenantScope.of(event.tenantId).predicate(null)}
        returning version`));
      await stamped(t, [{ eventId, tenantId: event.tenantId }]);
      return { eventId, version: row.version };
    },
    firstEvent(event, from) {
      if (!keeps(event.streamType)) return null;
      const data = event.data === undefined ? sql`to_jsonb(${from})` : sql.value(toJson(event.data), 'jsonb');
      return firstInsert(from, {
        id: sql.value(event.eventId, 'text'), streamType: sql.value(event.streamType, 'text'), streamId: sql.value(event.streamId, 'text'),
        eventType: sql.value(event.eventType, 'text'), data, actorId: sql.value(event.actorId, 'text'), tenantId: sql.value(tenantKey(event.tenantId), 'text'),
      });
    },
    firstEventFrom(streamType, from, c) {
      if (!keeps(streamType)) return null;
      return firstInsert(from, { ...c, tenantId: sql`coalesce(${c.tenantId}, '')` });
    },
    appendFrom(streamType, from, c) {
      if (!keeps(streamType)) return null;
      // The tenant may come from a nullable column (a job's): the global scope is stored as ''.
      const tenant = sql`coalesce(${c.tenantId}, '')`;
      // Tenant mode: heads are bumped in tenant order (the positions are evaluated after the sort),
      // so two statements appending for several tenants cannot deadlock on them.
      return sql`insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id${seqColumn})
        select ${c.id}, ${c.streamType}, ${c.streamId},
               coalesce((select max(e.version) from svc_events e
                          where e.stream_type = ${c.streamType} and e.stream_id = ${c.streamId}
                            and e.tenant_id = ${tenant}), 0) + 1,
               ${c.eventType}, ${c.data}, ${c.actorId}, ${tenant}${seqValue(tenant)}
          from ${from}${tenantMode ? sql` order by ${tenant}` : sql.empty}`;
    },
    async appendMany(t, given) {
      const all = tenantMode ? given.map((event) => (event.eventId ? event : { ...event, eventId: newId() })) : given;
      const dropped = all.filter((event) => !keeps(event.streamType));
      if (dropped.length > 0) {
        await markGaps(t, dropped.map((event) => event.streamType), 'policy off');
        await recordChanges(t, dropped.map((event) => ({ ...event, eventId: event.eventId ?? newId() })));
      }
      const events = dropped.length > 0 ? all.filter((event) => keeps(event.streamType)) : all;
      for (let start = 0; start < events.length; start += MAX_ROWS_PER_INSERT) {
        const tuples = events.slice(start, start + MAX_ROWS_PER_INSERT).map((event) => sql`(${sql.join([
          sql.value(event.eventId ?? newId()), sql.value(event.streamType), sql.value(event.streamId), sql.value(event.eventType),
          sql.value(toJson(event.data), 'jsonb'), sql.value(event.actorId), sql.value(tenantKey(event.tenantId)),
        ], ', ')})`);
        await t.none(compile(sql`
          insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
          select v.id, v.st, v.sid,
                 coalesce((select max(e.version) from svc_events e
                            where e.stream_type = v.st and e.stream_id = v.sid and e.tenant_id = v.tenant_id), 0) + 1,
                 v.et, v.data, v.actor, v.tenant_id
            from (values ${sql.join(tuples, ', ')}) as v(id, st, sid, et, data, actor, tenant_id)`));
      }
      if (tenantMode) await stamped(t, all.map((event) => ({ eventId: event.eventId!, tenantId: event.tenantId })));
    },
    async history(streamType, streamId, scope) {
      const rows = await db.manyOrNone(compile(sql`
        select id, seq, stream_type, stream_id, version, event_type, data, actor_id, tenant_id, occurred_at
          from svc_events
         where stream_type = ${sql.value(streamType, 'text')} and stream_id = ${sql.value(streamId, 'text')} and ${scope.predicate(null)}
         order by version`));
      return rows.map(toStoredEvent);
    },
    committed() {
      for (const wake of wakers) wake();
    },
    onCommitted(listener) {
      wakers.add(listener);
      return () => void wakers.delete(listener);
    },
  };
  return store;
}

/** History `off`: the changes the feed must carry without their events (no data, no version). */
async function recordChanges(t: Tx, events: ReadonlyArray<NewEvent & { eventId: string }>): Promise<void> {
  if (events.length === 0) return;
  const column = (of: (e: NewEvent & { eventId: string }) => string | null) => sql.value(events.map(of), 'text[]');
  await t.none(compile(sql`
    insert into svc_changes (id, stream_type, stream_id, event_type, tenant_id)
    select * from unnest(${sql.join([column((e) => e.eventId), column((e) => e.streamType), column((e) => e.streamId),
      column((e) => e.eventType), column((e) => tenantKey(e.tenantId))], ', ')})`));
}

/** The CTE a create statement names `created` (the row it inserts). */
export const CREATED = sql.alias('created');

/**
 * String-built CTEs (jobs, actions) as one fragment to append after a
 * statement's own CTEs: `, name as (body)` each.
 */
export function cteFragments(ctes: readonly CreatedCte[]): Sql {
  return sql.join(ctes.flatMap((cte) => cte(CREATED).map((named) => sql`, ${named.name} as (${named.body})`)), '');
}

function toJson(data: unknown): string | null {
  return data === undefined ? null : JSON.stringify(data);
}

function toStoredEvent(row: Record<string, any>): StoredEvent {
  return {
    eventId: row.id,
    seq: Number(row.seq),
    streamType: row.stream_type,
    streamId: row.stream_id,
    version: row.version,
    eventType: row.event_type,
    data: row.data,
    actorId: row.actor_id,
    tenantId: tenantOf(row.tenant_id),
    occurredAt: row.occurred_at,
  };
}
