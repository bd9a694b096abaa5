/**
 * Replay of a built-in projection: fold a model's events (in log order) into
 * the current state of each record, then write the live records with the
 * same text conversion as a build (build.ts).
 *
 * Event data is the change as the records layer wrote it; keys may be field
 * names (`inStock`), input names (`vendorId`) or columns (`in_stock`).
 */
import type { Tx } from '../db/index.ts';
import { compile, sql } from '../sql/index.ts';
import { columnList, columnRef, textExpression } from './plan.ts';
import type { EventRow } from './event.ts';
import type { TableProjection } from './types.ts';

interface RecordState {
  values: Record<string, unknown>;
  deleted: boolean;
}

const WRITE_CHUNK = 2000;

export class Fold {
  private readonly records = new Map<string, RecordState>();
  private readonly keyToColumn = new Map<string, string>();

  constructor(readonly projection: TableProjection) {
    for (const c of projection.columns) {
      for (const key of [c.column, c.jsonName, c.fieldName]) this.keyToColumn.set(key, c.column);
    }
  }

  apply(row: EventRow): void {
    const id = row.stream_id;
    const current = this.records.get(id);
    switch (row.event_type) {
      case 'Created':
        this.records.set(id, { values: this.merge({ created_at: row.occurred_at }, row), deleted: false });
        return;
      case 'Updated':
        this.records.set(id, { values: this.merge(current?.values ?? {}, row), deleted: current?.deleted ?? false });
        return;
      case 'Deleted':
        if (current) current.deleted = true;
        return;
      case 'Restored':
        if (current) this.records.set(id, { values: this.merge(current.values, row), deleted: false });
        return;
      case 'HardDeleted':
        this.records.delete(id);
        return;
      default: // not a state change of the record (custom event types are ignored)
    }
  }

  private merge(values: Record<string, unknown>, row: EventRow): Record<string, unknown> {
    // A record's tenant is fixed at creation; later events may not carry it.
    const tenant = row.event_type === 'Created' ? row.tenant_id : (values.tenant_id ?? row.tenant_id);
    const next: Record<string, unknown> = { ...values, id: row.stream_id, tenant_id: tenant, updated_at: row.occurred_at };
    if (row.data && typeof row.data === 'object' && !Array.isArray(row.data)) {
      for (const [key, value] of Object.entries(row.data)) {
        const column = this.keyToColumn.get(key);
        if (column && column !== 'id' && column !== 'tenant_id') next[column] = value;
      }
    }
    return next;
  }

  /** Inserts the live records into the (emptied) projection table; returns how many. */
  async write(t: Tx): Promise<number> {
    const p = this.projection;
    const live = [...this.records.values()].filter((r) => !r.deleted).map((r) => r.values);
    // The column types are the catalog's format_type text of the base table (plan.ts), not input.
    const definition = sql.join(p.columns.map((c) => sql`${sql.ident(c.column)} ${sql.raw(c.baseType)}`), ', ');
    const texts = sql.join(p.columns.map((c) => textExpression(columnRef(c.column, 'r'), c.baseType)), ', ');
    for (let i = 0; i < live.length; i += WRITE_CHUNK) {
      const rows = sql.value(JSON.stringify(live.slice(i, i + WRITE_CHUNK)), 'jsonb');
      await t.none(compile(sql`insert into ${sql.ident(p.table)} (${columnList(p)})
      select ${texts} from jsonb_to_recordset(${rows}) as r(${definition})`));
    }
    return live.length;
  }
}
