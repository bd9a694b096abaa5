/**
 * The event store: append a change to a stream in the caller's transaction,
 * read a stream's history, and hear committed changes from any instance.
 *
 * Versions are per stream. The caller must hold the row lock of the record the
 * stream belongs to (it just inserted, updated or deleted it), so appends to
 * one stream are serialised and `max(version) + 1` never repeats; the unique
 * constraint is the backstop.
 */
import { newId } from '../ids.ts';
import type { Db, Notifier, Tx } from '../db/index.ts';
import { FULL_HISTORY, markGaps, type HistoryOptions } from './history.ts';

export const CHANGES_CHANNEL = 'svc_changes';

export interface NewEvent {
  /** Model name, or `Job` for job transitions. */
  readonly streamType: string;
  readonly streamId: string;
  readonly eventType: string;
  readonly data: unknown;
  readonly actorId: string | null;
  readonly tenantId: string | null;
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

/** What every instance hears after a commit (small: fits a NOTIFY payload). */
export interface ChangeNotice {
  readonly eventType: string;
  readonly modelName: string;
  readonly eventId: string;
  readonly recordId: string;
  readonly tenantId: string | null;
}

export type ChangeListener = (change: ChangeNotice) => void;

export interface EventStore {
  /** The history policy in force; `keeps(streamType)` is false when events of that stream are not written. */
  readonly policy: HistoryOptions;
  keeps(streamType: string): boolean;
  /**
   * Appends in `t` and announces the change on commit. Under history `off` a
   * model event is not written (version 0) but still announced.
   */
  append(t: Tx, event: NewEvent): Promise<{ eventId: string; version: number }>;
  /** Appends many events of distinct streams in `t` (chunked), announcing each on commit. */
  appendMany(t: Tx, events: readonly NewEvent[]): Promise<void>;
  /**
   * Folds a new stream's first event into the statement that creates its row:
   * `row` is an INSERT ... RETURNING; the result runs it, appends a version-1
   * event whose data is the returned row, and announces it, as one statement
   * (one round trip, atomic on its own). Null when the policy does not keep
   * the stream: the caller then uses `append` in a transaction.
   */
  withCreatedEvent(row: SqlQuery, event: CreatedEvent): SqlQuery | null;
  history(streamType: string, streamId: string, tenantId?: string | null): Promise<StoredEvent[]>;
  /** Hears committed changes from every instance; returns the unsubscribe function. */
  onChange(listener: ChangeListener): Promise<() => Promise<void>>;
}

export interface SqlQuery {
  readonly text: string;
  readonly values: unknown[];
}

/** A new stream's first event; without `data`, the data is the created row itself. */
export type CreatedEvent = Omit<NewEvent, 'data'> & { readonly data?: unknown };

/** Column the combined create statement adds to the row; callers drop it. */
export const NOTIFY_COLUMN = '__svc_notified';

const MAX_ROWS_PER_INSERT = 1000; // 10 params a row stays far below Postgres' 65,535

export function createEventStore(db: Db, notifier: Notifier, policy: HistoryOptions = FULL_HISTORY): EventStore {
  const keeps = (streamType: string) => policy.policy !== 'off' || !policy.models.has(streamType);
  const store: EventStore = {
    policy,
    keeps,
    async append(t, event) {
      const eventId = newId();
      if (!keeps(event.streamType)) {
        await markGaps(t, [event.streamType], 'policy off');
        await announce(t, [{ ...event, eventId }]);
        return { eventId, version: 0 };
      }
      // One round trip: the insert and its change notice (delivered on commit).
      const row = await t.one<{ version: number }>(
        `with appended as (
           insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
           select $1, $2, $3, coalesce(max(version), 0) + 1, $4, $5, $6, $7
             from svc_events where stream_type = $2 and stream_id = $3
           returning version
         )
         select version, pg_notify($8, $9) from appended`,
        [eventId, event.streamType, event.streamId, event.eventType, toJson(event.data), event.actorId, event.tenantId,
          CHANGES_CHANNEL, notice({ ...event, eventId })],
      );
      return { eventId, version: row.version };
    },
    withCreatedEvent(row, event) {
      if (!keeps(event.streamType)) return null;
      const eventId = newId();
      const n = row.values.length;
      const $ = (i: number) => `$${n + i}`;
      const data = event.data === undefined ? 'to_jsonb(created)' : `${$(9)}::jsonb`;
      return {
        text: `with created as (${row.text}),
          appended as (
            insert into svc_events (id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id)
            select ${$(1)}, ${$(2)}, ${$(3)}, 1, ${$(4)}, ${data}, ${$(5)}, ${$(6)} from created
          )
          select created.*, pg_notify(${$(7)}, ${$(8)}) as "${NOTIFY_COLUMN}" from created`,
        values: [...row.values, eventId, event.streamType, event.streamId, event.eventType, event.actorId, event.tenantId,
          CHANGES_CHANNEL, notice({ ...event, eventId }), ...(event.data === undefined ? [] : [toJson(event.data)])],
      };
    },
    async appendMany(t, all) {
      const dropped = all.filter((event) => !keeps(event.streamType));
      if (dropped.length > 0) {
        await markGaps(t, dropped.map((event) => event.streamType), 'policy off');
        await announce(t, dropped.map((event) => ({ ...event, eventId: newId() })));
      }
      const events = dropped.length > 0 ? all.filter((event) => keeps(event.streamType)) : all;
      for (let start = 0; start < events.length; start += MAX_ROWS_PER_INSERT) {
        const chunk = events.slice(start, start + MAX_ROWS_PER_INSERT).map((event) => ({ ...event, eventId: newId() }));
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
        await announce(t, chunk);
      }
    },
    async history(streamType, streamId, tenantId) {
      const rows = await db.manyOrNone(
        `select id, seq, stream_type, stream_id, version, event_type, data, actor_id, tenant_id, occurred_at
           from svc_events
          where stream_type = $1 and stream_id = $2 ${tenantId === undefined ? '' : 'and tenant_id is not distinct from $3'}
          order by version`,
        [streamType, streamId, tenantId],
      );
      return rows.map(toStoredEvent);
    },
    async onChange(listener) {
      return notifier.listen(CHANGES_CHANNEL, (payload) => {
        const change = parseNotice(payload);
        if (change) listener(change);
      });
    },
  };
  return store;
}

async function announce(t: Tx, events: ReadonlyArray<NewEvent & { eventId: string }>): Promise<void> {
  if (events.length === 0) return;
  const payloads = events.map(notice);
  await t.any('select pg_notify($1, p) from unnest($2::text[]) as p', [CHANGES_CHANNEL, payloads]);
}

function notice(event: CreatedEvent & { eventId: string }): string {
  return JSON.stringify([event.eventType, event.streamType, event.eventId, event.streamId, event.tenantId]);
}

function parseNotice(payload: string): ChangeNotice | null {
  try {
    const [eventType, modelName, eventId, recordId, tenantId] = JSON.parse(payload) as [
      string, string, string, string, string | null,
    ];
    return { eventType, modelName, eventId, recordId, tenantId };
  } catch {
    return null;
  }
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
