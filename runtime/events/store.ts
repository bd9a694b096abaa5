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
import { bindTo, type TenantScope } from '../tenancy/index.ts';

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
  keeps(streamType: string): boolean;
  /**
   * Appends in `t`. Under history `off` a model event is not written
   * (version 0): a small row of svc_changes carries the change to the feed.
   */
  append(t: Tx, event: NewEvent): Promise<{ eventId: string; version: number }>;
  /** Appends many events of distinct streams in `t` (chunked). */
  appendMany(t: Tx, events: readonly NewEvent[]): Promise<void>;
  /**
   * Folds a new stream's first event into the statement that creates its row:
   * `row` is an INSERT ... RETURNING; the result runs it and appends a
   * version-1 event whose data is the returned row, as one statement (one
   * round trip, atomic on its own); it returns the created row's columns
   * only. Null when the policy does not keep the stream: the caller then uses
   * `append` in a transaction. `also`: CTEs of other capabilities that read
   * the created row (the audit entry).
   */
  withCreatedEvent(row: SqlQuery, event: CreatedEvent, also?: readonly CreatedCte[]): SqlQuery | null;
  /**
   * A CTE body that appends a new stream's first event once per row of the
   * CTE named by its first argument (none when it has no row): for a
   * statement that creates the stream's row itself (a job enqueued with the
   * write that caused it). Null when the policy does not keep the stream.
   */
  firstEventCte(event: NewEvent & { readonly eventId: string }): CreatedCte | null;
  /**
   * The INSERT (a CTE body) that appends one event per row of `from`, in the
   * statement that changed those rows: `from` names a data-modifying CTE
   * (`update ... returning`) whose rows it locked, so each stream's writers
   * are serialised and the version is the stream's next (the unique
   * constraint is the backstop: a lost race fails the statement, code 23505).
   * `columns` are SQL expressions over `from`'s rows, values bound by the
   * caller. Null when the policy does not keep `streamType`: the caller
   * then uses `append`/`appendMany` in a transaction.
   */
  appendFrom(streamType: string, from: string, columns: EventColumnsSql): string | null;
  /** A stream's events, oldest first; only those in `scope` when given (the system reads every scope). */
  history(streamType: string, streamId: string, scope?: TenantScope): Promise<StoredEvent[]>;
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
 * A CTE body another capability adds to the combined create statement: it
 * reads the created row from the CTE named `created` and binds its values
 * through `p` (placeholders after the statement's own). It may also return
 * several CTEs named by itself, in order, when one must read another's rows
 * (a job insert, then its event): their names must be unique in the statement.
 */
export type CreatedCte = (created: string, p: { add(value: unknown, type?: string): string }) => string | readonly NamedCte[];

export interface NamedCte {
  readonly name: string;
  readonly body: string;
}

/** SQL expressions of an event's columns (see `appendFrom`). */
export interface EventColumnsSql {
  readonly id: string;
  readonly streamType: string;
  readonly streamId: string;
  readonly eventType: string;
  /** A jsonb expression. */
  readonly data: string;
  readonly actorId: string;
  readonly tenantId: string;
}

/** A new stream's first event; without `data`, the data is the created row itself. */
export type CreatedEvent = Omit<NewEvent, 'data'> & { readonly data?: unknown };

const MAX_ROWS_PER_INSERT = 1000; // 10 params a row stays far below Postgres' 65,535

export function createEventStore(db: Db, policy: HistoryOptions = FULL_HISTORY): EventStore {
  const keeps = (streamType: string) => policy.policy !== 'off' || !policy.models.has(streamType);
  const wakers = new Set<() => void>();
  const store: EventStore = {
    policy,
    keeps,
    async append(t, event) {
      const eventId = event.eventId ?? newId();
      if (!keeps(event.streamType)) {
        await markGaps(t, [event.streamType], 'policy off');
        await recordChanges(t, [{ ...event, eventId }]);
        return { eventId, version: 0 };
      }
      const row = await t.one<{ version: number }>(
        `insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
         select $1, $2, $3, coalesce(max(version), 0) + 1, $4, $5, $6, $7
           from svc_events where stream_type = $2 and stream_id = $3
         returning version`,
        [eventId, event.streamType, event.streamId, event.eventType, toJson(event.data), event.actorId, event.tenantId],
      );
      return { eventId, version: row.version };
    },
    withCreatedEvent(row, event, also = []) {
      if (!keeps(event.streamType)) return null;
      const eventId = event.eventId ?? newId();
      const n = row.values.length;
      const data = event.data === undefined ? 'to_jsonb(created)' : `$${n + 7}::jsonb`;
      const values = [...row.values, eventId, event.streamType, event.streamId, event.eventType, event.actorId, event.tenantId,
        ...(event.data === undefined ? [] : [toJson(event.data)])];
      // Hot path (every create): no closures made per call (tsx names each one it makes).
      const p = new Placeholders(values);
      const $1 = `$${n + 1}`, $2 = `$${n + 2}`, $3 = `$${n + 3}`, $4 = `$${n + 4}`, $5 = `$${n + 5}`, $6 = `$${n + 6}`;
      const more = also.map((cte, i) => {
        const body = cte('created', p);
        return typeof body === 'string' ? `, also_${i} as (${body})` : body.map((named) => `, ${named.name} as (${named.body})`).join('');
      }).join('');
      return {
        text: `with created as (${row.text}),
          appended as (
            insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
            select ${$1}, ${$2}, ${$3}, 1, ${$4}, ${data}, ${$5}, ${$6} from created
          )${more}
          select created.* from created`,
        values,
      };
    },
    firstEventCte(event) {
      if (!keeps(event.streamType)) return null;
      return (source, p) => `insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
        select ${p.add(event.eventId, 'text')}, ${p.add(event.streamType, 'text')}, ${p.add(event.streamId, 'text')}, 1,
               ${p.add(event.eventType, 'text')}, ${p.add(toJson(event.data), 'jsonb')}, ${p.add(event.actorId, 'text')},
               ${p.add(event.tenantId, 'text')} from ${source}`;
    },
    appendFrom(streamType, from, c) {
      if (!keeps(streamType)) return null;
      return `insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
        select ${c.id}, ${c.streamType}, ${c.streamId},
               coalesce((select max(e.version) from svc_events e where e.stream_type = ${c.streamType} and e.stream_id = ${c.streamId}), 0) + 1,
               ${c.eventType}, ${c.data}, ${c.actorId}, ${c.tenantId}
          from ${from}`;
    },
    async appendMany(t, all) {
      const dropped = all.filter((event) => !keeps(event.streamType));
      if (dropped.length > 0) {
        await markGaps(t, dropped.map((event) => event.streamType), 'policy off');
        await recordChanges(t, dropped.map((event) => ({ ...event, eventId: event.eventId ?? newId() })));
      }
      const events = dropped.length > 0 ? all.filter((event) => keeps(event.streamType)) : all;
      for (let start = 0; start < events.length; start += MAX_ROWS_PER_INSERT) {
        const chunk = events.slice(start, start + MAX_ROWS_PER_INSERT).map((event) => ({ ...event, eventId: event.eventId ?? newId() }));
        const values: unknown[] = [];
        const tuples = chunk.map((event, i) => {
          values.push(event.eventId, event.streamType, event.streamId, event.eventType, toJson(event.data),
            event.actorId, event.tenantId);
          const p = i * 7;
          return `($${p + 1}, $${p + 2}, $${p + 3}, $${p + 4}, $${p + 5}::jsonb, $${p + 6}, $${p + 7})`;
        });
        await t.none(
          `insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
           select v.id, v.st, v.sid,
                  coalesce((select max(e.version) from svc_events e where e.stream_type = v.st and e.stream_id = v.sid), 0) + 1,
                  v.et, v.data, v.actor, v.tenant
             from (values ${tuples.join(', ')}) as v(id, st, sid, et, data, actor, tenant)`,
          values,
        );
      }
    },
    async history(streamType, streamId, scope) {
      const values: unknown[] = [streamType, streamId];
      const rows = await db.manyOrNone(
        `select id, seq, stream_type, stream_id, version, event_type, data, actor_id, tenant_id, occurred_at
           from svc_events
          where stream_type = $1 and stream_id = $2 ${scope ? `and ${scope.sql(bindTo(values), 'tenant_id')}` : ''}
          order by version`,
        values,
      );
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
  await t.none(
    `insert into svc_changes (id, stream_type, stream_id, event_type, tenant_id)
     select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])`,
    [events.map((e) => e.eventId), events.map((e) => e.streamType), events.map((e) => e.streamId),
      events.map((e) => e.eventType), events.map((e) => e.tenantId)],
  );
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
    tenantId: row.tenant_id,
    occurredAt: row.occurred_at,
  };
}

/** Placeholders after a statement's own values: `add` appends a value and returns its `$n` (cast when typed). */
class Placeholders {
  constructor(private readonly values: unknown[]) {}

  add(value: unknown, type?: string): string {
    return `$${this.values.push(value)}${type ? `::${type}` : ''}`;
  }
}
