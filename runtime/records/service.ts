/**
 * The records API: model-generic reads and event-sourced writes, with access
 * control and tenant scoping on every call. The GraphQL layer is a thin
 * client of it; other capabilities may use it through `ctx.services.records`.
 */
import type { ServiceContext } from '../service/types.ts';
import type { Caller } from './access.ts';
import { createDeps, type RecordsDeps } from './deps.ts';
import type { Row } from './include.ts';
import { hardDeleteRecord, deleteRecord, restoreRecord } from './lifecycle.ts';
import { getRecord, listDeleted, listRecords, pageRecords, recordHistory, type ListArgs, type Page, type PageArgs } from './read.ts';
import { createRecord, updateMany, updateRecord } from './write.ts';

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
}

export function createRecordService(ctx: ServiceContext): RecordService {
  const deps = createDeps({
    ir: ctx.ir, access: ctx.access, db: ctx.db, events: ctx.services.events, resolvers: ctx.resolvers, log: ctx.log,
    prepared: ctx.dbKind === 'server',
  });
  return {
    deps,
    get: (caller, model, id, include) => getRecord(deps, caller, model, id, include),
    list: (caller, model, args = {}) => listRecords(deps, caller, model, args),
    page: (caller, model, args = {}) => pageRecords(deps, caller, model, args),
    deleted: (caller, model, args = {}) => listDeleted(deps, caller, model, args),
    history: (caller, model, id) => recordHistory(deps, caller, model, id),
    create: (caller, model, data) => createRecord(deps, caller, model, data),
    update: (caller, model, id, data) => updateRecord(deps, caller, model, id, data),
    updateMany: (caller, model, where, data) => updateMany(deps, caller, model, where, data),
    delete: (caller, model, id) => deleteRecord(deps, caller, model, id),
    restore: (caller, model, id) => restoreRecord(deps, caller, model, id),
    hardDelete: (caller, model, id) => hardDeleteRecord(deps, caller, model, id),
  };
}
