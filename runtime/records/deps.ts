/**
 * What every records operation shares: compiled models, access table, the
 * database, and the statement runner. Built once per service.
 */
import { LRUCache } from 'lru-cache';
import type { AccessTable, EmbedDef, Operation, SchemaIR } from '../ir/types.ts';
import { anyRows, statementName, type Db, type Tx } from '../db/index.ts';
import type { EventStore } from '../events/index.ts';
import type { AuditLog } from '../audit/index.ts';
import type { Logger } from '../log/index.ts';
import type { ResolverTable } from '../core/index.ts';
import { assertAllowed, type Caller } from './access.ts';
import { invalid } from './errors.ts';
import { compileModels, type ModelInfo } from './model.ts';
import type { Query } from './sql.ts';
import { Validator } from './validate.ts';
import type { WhereLimits } from './where.ts';
import { WriteTriggers } from './triggers.ts';

export type Runner = Db | Tx;

export interface RecordsDeps {
  readonly models: ReadonlyMap<string, ModelInfo>;
  readonly access: AccessTable;
  readonly db: Db;
  /** Where plain reads (get, list, page) run: a replica (SVC_READ_DATABASE_URL) or `db`. */
  readonly readDb: Db;
  readonly events: EventStore;
  readonly audit: AuditLog;
  readonly resolvers: ResolverTable;
  readonly validator: Validator;
  readonly log: Logger;
  /** Named prepared statements (plan cached per connection); off for embedded PGlite. */
  readonly prepared: boolean;
  readonly limits: RecordsLimits;
  /** Side effects committed with a write (actions, workflow runs): see triggers.ts. */
  readonly triggers: WriteTriggers;
  /** Runs a statement on `runner` and returns its rows. */
  rows<T = Record<string, unknown>>(runner: Runner, query: Query): Promise<T[]>;
  /** The model, checked to exist and to allow `op` to the caller. */
  model(name: unknown, op: Operation, caller: Caller): ModelInfo;
}

export interface RecordsLimits {
  readonly where: WhereLimits;
  /** `paginatedRecords.totalCount` is exact up to this many rows, an estimate beyond (SVC_GRAPHQL_EXACT_COUNT_LIMIT). */
  readonly exactCount: number;
  /** At most this many statement texts are prepared by name on each connection (0: none). */
  readonly maxPreparedStatements: number;
}

export interface DepsInput {
  readonly ir: SchemaIR;
  readonly access: AccessTable;
  readonly db: Db;
  readonly readDb: Db;
  readonly events: EventStore;
  readonly audit: AuditLog;
  readonly resolvers: ResolverTable;
  readonly log: Logger;
  readonly prepared: boolean;
  readonly limits: RecordsLimits;
}

/**
 * Which statements are prepared by name. A named statement stays prepared on
 * every pooled connection that ran it, for the connection's life, so the set
 * of names must be bounded: the first `max` texts seen twice get a name for
 * good (the fixed shapes every deployment runs: by id, list, page, writes);
 * any other text (a new `where` shape) runs unnamed, parsed per execution.
 * Repeats are counted in a bounded map, so one-off shapes cost no memory either.
 */
export class StatementNames {
  private readonly named = new Map<string, string>();
  private readonly seen: LRUCache<string, true>;

  constructor(private readonly max: number) {
    this.seen = new LRUCache({ max: Math.max(1, max * 4) });
  }

  /** The name of `text`, or undefined when it runs unnamed. */
  nameOf(text: string): string | undefined {
    const name = this.named.get(text);
    if (name || this.named.size >= this.max) return name;
    if (!this.seen.has(text)) {
      this.seen.set(text, true);
      return undefined;
    }
    this.seen.delete(text);
    const fresh = statementName('svc_rec', text);
    this.named.set(text, fresh);
    return fresh;
  }

  get size(): number {
    return this.named.size;
  }
}

export function createDeps(input: DepsInput): RecordsDeps {
  const models = compileModels(input.ir);
  const embeds = new Map<string, EmbedDef>(input.ir.embeds.map((e) => [e.name, e]));
  const names = new StatementNames(input.prepared ? input.limits.maxPreparedStatements : 0);
  return {
    ...input,
    models,
    validator: new Validator(embeds),
    triggers: new WriteTriggers(),
    rows<T>(runner: Runner, query: Query): Promise<T[]> {
      const name = names.nameOf(query.text);
      const statement = name ? { name, ...query } : query;
      return anyRows<T>(runner, statement);
    },
    model(name, op, caller) {
      const info = typeof name === 'string' ? models.get(name) : undefined;
      if (!info) throw invalid('model', `${String(name)} is not a model of this schema`);
      assertAllowed(input.access, info.model, op, caller);
      return info;
    },
  };
}
