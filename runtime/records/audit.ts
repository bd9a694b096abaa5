/**
 * Records' side of the audit log: the entry of each mutation, its `changes`
 * with `@sensitive` fields redacted, and the SQL that reads an update's old
 * values in the UPDATE statement itself.
 */
import { redactFields, REDACTED, userActor, type AuditAction, type AuditEntryInput } from '../audit/index.ts';
import { isoUtcSql } from '../db/index.ts';
import { sql, type Sql } from '../sql/index.ts';
import type { Caller } from './access.ts';
import type { RecordsDeps } from './deps.ts';
import type { Row } from './row.ts';
import type { ModelInfo } from './model.ts';
import type { ValidData } from './validate.ts';

const sensitiveByModel = new WeakMap<ModelInfo, ReadonlySet<string>>();

/** Input names of the model's `@sensitive` fields. */
function sensitiveOf(info: ModelInfo): ReadonlySet<string> {
  let set = sensitiveByModel.get(info);
  if (!set) {
    set = new Set(info.columns.filter((c) => c.field?.sensitive).map((c) => c.name));
    sensitiveByModel.set(info, set);
  }
  return set;
}

/**
 * A written row as an automation receives it (an action's job payload, a
 * workflow run's trigger): `@sensitive` fields show "[redacted]", as in the
 * audit log, except the ones in `declared` (fields the automation names).
 */
export function automationRedaction(info: ModelInfo, declared: ReadonlySet<string>): (row: Row | null) => Row | null {
  const hidden = new Set([...sensitiveOf(info)].filter((name) => !declared.has(name)));
  return (row) => (row === null || hidden.size === 0 ? row : redactFields(row, hidden));
}

export function recordEntry(
  info: ModelInfo, caller: Caller, action: AuditAction, entityId: string, eventId: string | null,
  changes: Record<string, unknown> | null = null,
): AuditEntryInput {
  return {
    action, tenantId: caller.scope.tenantId, actor: userActor(caller.principal), entityType: info.name, entityId, eventId,
    changes, request: caller.request ?? null,
  };
}

/** A create's entry: the written fields. */
export function createdEntry(info: ModelInfo, caller: Caller, id: string, eventId: string, valid: ValidData): AuditEntryInput {
  return recordEntry(info, caller, 'record.create', id, eventId, redactFields(valid.data, sensitiveOf(info)));
}

/** True when entries keep `changes`: only then does an update read the old values. */
export const keepsChanges = (deps: RecordsDeps) => deps.audit.policy === 'full';

/** Column of the update's result that carries `{field: [old, new]}`; the caller removes it from the row. */
export const CHANGES_COLUMN = '__audit_changes';

/**
 * `jsonb_build_object('field', jsonb_build_array(prior.col, now.col), ...)`
 * over the updated columns: both sides rendered by Postgres alike. A
 * sensitive field is never read.
 */
export function changesSql(info: ModelInfo, valid: ValidData, prior: string, now: string): Sql {
  const sensitive = sensitiveOf(info);
  const [before, after] = [sql.alias(prior), sql.alias(now)];
  const at = (alias: Sql, c: ValidData['columns'][number]) => sql`${alias}.${c.ident}`;
  const pairs = valid.columns.map((c) => {
    const value = sensitive.has(c.name)
      ? REDACTED_PAIR
      : c.sqlType === 'timestamptz'
        ? sql`jsonb_build_array(${sql.raw(isoUtcSql(sql.text(at(before, c))))}, ${sql.raw(isoUtcSql(sql.text(at(after, c))))})`
        : sql`jsonb_build_array(${at(before, c)}, ${at(after, c)})`;
    return sql`${sql.value(c.name, 'text')}, ${value}`;
  });
  return sql`jsonb_build_object(${sql.join(pairs, ', ')})`;
}

const REDACTED_PAIR = sql`${sql.value(JSON.stringify([REDACTED, REDACTED]), 'jsonb')}`;

/** The columns the `prior` subquery must select: the id and the updated ones. */
export function priorColumns(valid: ValidData, alias: string): Sql {
  const table = sql.alias(alias);
  return sql.join([sql`${table}."id"`, ...valid.columns.map((c) => sql`${table}.${c.ident}`)], ', ');
}
