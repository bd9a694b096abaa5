/** Reading model events for a rebuild, in log order. */
import { isoUtc, type Tx } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import { tenantOf } from '../tenancy/index.ts';
import type { ProjectionEvent } from './types.ts';

const COLUMNS = sql.raw('seq, id, stream_type, stream_id, version, event_type, data, actor_id, tenant_id, occurred_at');

export interface EventRow {
  readonly seq: number;
  readonly id: string;
  readonly stream_type: string;
  readonly stream_id: string;
  readonly version: number;
  readonly event_type: string;
  readonly data: unknown;
  readonly actor_id: string | null;
  readonly tenant_id: string | null;
  readonly occurred_at: string;
}

export function toProjectionEvent(row: EventRow, replay: boolean): ProjectionEvent {
  return {
    eventId: row.id, eventType: row.event_type, model: row.stream_type, recordId: row.stream_id,
    version: row.version, data: row.data, actorId: row.actor_id, tenantId: tenantOf(row.tenant_id),
    occurredAt: isoUtc(row.occurred_at), replay,
  };
}

const PAGE = 5000;
const LIMIT = sql.raw(String(PAGE));

/** Calls `visit` for every event of `models` in log order, a page at a time, on `t`. */
export async function forEachEvent(t: Tx, models: readonly string[], visit: (row: EventRow) => Promise<void> | void): Promise<number> {
  let after = 0;
  let count = 0;
  for (;;) {
    const rows = await t.manyOrNone<EventRow>(compile(sql`
      select ${COLUMNS} from svc_events
       where stream_type = any(${sql.value(models, 'text[]')}) and seq > ${sql.value(after, 'bigint')}
       order by seq limit ${LIMIT}`));
    for (const row of rows) await visit(row);
    count += rows.length;
    if (rows.length < PAGE) return count;
    after = Number(rows[rows.length - 1].seq);
  }
}
