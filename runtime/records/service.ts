/**
 * The records API: model-generic reads and event-sourced writes, with access
 * control and tenant scoping on every call. The GraphQL layer is a thin
 * client of it; other capabilities may use it through `ctx.services.records`.
 */
import type { ServiceContext } from '../core/index.ts';
import type { Caller } from './access.ts';
import { createDeps, type RecordsDeps } from './deps.ts';
import type { Row } from './row.ts';
import { hardDeleteRecord, deleteRecord, restoreRecord } from './lifecycle.ts';
import { getRecord, listDeleted, listRecords, pageRecords, recordHistory, type ListArgs, type Page, type PageArgs } from './read.ts';
import { createRecord, updateMany, updateRecord } from './write.ts';
import { rejectNul } from '../http/input.ts';
import { isPlainObject } from './values.ts';
import type { WriteTriggers } from './triggers.ts';
import { preparesStatements, type Db, type Tx } from '../db/index.ts';

export interface RecordEvent {
  readonly eventId: string;
  readonly eventType: string;
  readonly version: number;
  readonly data: unknown;
  readonly actorId: string | null;
  readonly occurredAt: string;
}

export interface RecordService {
  readonly deps: RecordsDeps;
  /** Register side effects that commit with a model write (see triggers.ts). */
  readonly triggers: WriteTriggers;
  get(caller: Caller, model: unknown, id: string, include?: unknown): Promise<Row | null>;
  list(caller: Caller, model: unknown, args?: ListArgs): Promise<Row[]>;
  page(caller: Caller, model: unknown, args?: PageArgs): Promise<Page>;
  deleted(caller: Caller, model: unknown, args?: ListArgs): Promise<Row[]>;
  history(caller: Caller, model: unknown, id: string): Promise<RecordEvent[]>;
  create(caller: Caller, model: unknown, data: unknown): Promise<Row>;
  update(caller: Caller, model: unknown, id: string, data: unknown): Promise<Row>;
  updateMany(caller: Caller, model: unknown, where: unknown, data: unknown): Promise<number>;
  delete(caller: Caller, model: unknown, id: string): Promise<boolean>;
  restore(caller: Caller, model: unknown, id: string): Promise<Row>;
  hardDelete(caller: Caller, model: unknown, id: string): Promise<boolean>;
  /**
   * The same API inside the caller's transaction `t`: each write runs in a
   * savepoint of `t` (a refused write rolls back only itself) and commits
   * with `t`, reads see `t`'s own writes. A workflow's mutation step commits
   * with its step record this way.
   */
  within(t: Tx): RecordService;
}

/**
 * Refuses input no column can hold (U+0000) before any statement runs, naming
 * the field as validation does: `data`'s fields by their own name, others by
 * argument (`where.name`, `id`).
 */
async function checked<T>(args: object, run: () => Promise<T>, dataFieldsBare = false): Promise<T> {
  const { data, ...rest } = args as { data?: unknown };
  rejectNul(rest);
  if (data !== undefined) rejectNul(data, dataFieldsBare && isPlainObject(data) ? '' : 'data');
  return run();
}

export function createRecordService(ctx: ServiceContext<'events' | 'audit'>): RecordService {
  const deps = createDeps({
    ir: ctx.ir, access: ctx.access, db: ctx.db, readDb: ctx.readDb, events: ctx.services.events, audit: ctx.services.audit,
    resolvers: ctx.resolvers, log: ctx.log,
      prepared: preparesStatements(ctx),
    limits: {
      where: { maxDepth: ctx.config.graphql.maxWhereDepth, maxNodes: ctx.config.graphql.maxWhereNodes },
      exactCount: ctx.config.graphql.exactCountLimit,
      maxPreparedStatements: ctx.config.maxPreparedStatements,
    },
  });
  return serviceOver(deps);
}

function serviceOver(deps: RecordsDeps): RecordService {
  return {
    deps,
    triggers: deps.triggers,
    get: (caller, model, id, include) => checked({ id, include }, () => getRecord(deps, caller, model, id, include)),
    list: (caller, model, args = {}) => checked(args, () => listRecords(deps, caller, model, args)),
    page: (caller, model, args = {}) => checked(args, () => pageRecords(deps, caller, model, args)),
    deleted: (caller, model, args = {}) => checked(args, () => listDeleted(deps, caller, model, args)),
    history: (caller, model, id) => checked({ id }, () => recordHistory(deps, caller, model, id)),
    create: (caller, model, data) => checked({ data }, () => createRecord(deps, caller, model, data), true),
    update: (caller, model, id, data) => checked({ id, data }, () => updateRecord(deps, caller, model, id, data), true),
    updateMany: (caller, model, where, data) => checked({ where, data }, () => updateMany(deps, caller, model, where, data), true),
    delete: (caller, model, id) => checked({ id }, () => deleteRecord(deps, caller, model, id)),
    restore: (caller, model, id) => checked({ id }, () => restoreRecord(deps, caller, model, id)),
    hardDelete: (caller, model, id) => checked({ id }, () => hardDeleteRecord(deps, caller, model, id)),
    // A task's `tx()` opens a savepoint: the write paths' own transaction nests inside `t`.
    within: (t) => serviceOver({ ...deps, db: t as unknown as Db, readDb: t as unknown as Db }),
  };
}
