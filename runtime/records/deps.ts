/**
 * What every records operation shares: compiled models, access table, the
 * database, and the statement runner. Built once per service.
 */
import { createHash } from 'node:crypto';
import type { AccessTable, EmbedDef, Operation, SchemaIR } from '../ir/types.ts';
import type { Db, Tx } from '../db/index.ts';
import type { EventStore } from '../events/index.ts';
import type { Logger } from '../log/index.ts';
import type { ResolverTable } from '../service/types.ts';
import { assertAllowed, type Caller } from './access.ts';
import { invalid } from './errors.ts';
import { compileModels, type ModelInfo } from './model.ts';
import type { Query } from './sql.ts';
import { Validator } from './validate.ts';

export type Runner = Db | Tx;

export interface RecordsDeps {
  readonly models: ReadonlyMap<string, ModelInfo>;
  readonly access: AccessTable;
  readonly db: Db;
  readonly events: EventStore;
  readonly resolvers: ResolverTable;
  readonly validator: Validator;
  readonly log: Logger;
  /** Named prepared statements (plan cached per connection); off for embedded PGlite. */
  readonly prepared: boolean;
  /** Runs a statement on `runner` and returns its rows. */
  rows<T = Record<string, unknown>>(runner: Runner, query: Query): Promise<T[]>;
  /** The model, checked to exist and to allow `op` to the caller. */
  model(name: unknown, op: Operation, caller: Caller): ModelInfo;
}

export interface DepsInput {
  readonly ir: SchemaIR;
  readonly access: AccessTable;
  readonly db: Db;
  readonly events: EventStore;
  readonly resolvers: ResolverTable;
  readonly log: Logger;
  readonly prepared: boolean;
}

const statementNames = new Map<string, string>();

/** One stable name per SQL text: Postgres parses and plans it once per connection. */
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (!name) {
    name = `svc_${createHash('sha1').update(text).digest('base64url').slice(0, 20)}`;
    if (statementNames.size > 5000) statementNames.clear();
    statementNames.set(text, name);
  }
  return name;
}

export function createDeps(input: DepsInput): RecordsDeps {
  const models = compileModels(input.ir);
  const embeds = new Map<string, EmbedDef>(input.ir.embeds.map((e) => [e.name, e]));
  return {
    ...input,
    models,
    validator: new Validator(embeds),
    rows(runner, query) {
      const statement = input.prepared ? { name: statementName(query.text), ...query } : query;
      return runner.any(statement);
    },
    model(name, op, caller) {
      const info = typeof name === 'string' ? models.get(name) : undefined;
      if (!info) throw invalid('model', `${String(name)} is not a model of this schema`);
      assertAllowed(input.access, info.model, op, caller);
      return info;
    },
  };
}
